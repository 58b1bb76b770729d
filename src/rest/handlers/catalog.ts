// GET /rest/$catalog, /rest/$catalog/$all, /rest/$catalog/{dataClass}: the exposed structure,
// in the shapes of the spec ("Catalog") and reference §2.1. Optional flags appear only when true.

import type { DataClass } from '../../datastore/dataclass.js';
import type { Datastore } from '../../datastore/datastore.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { dataClassMethods, datastoreMethods } from '../../functions/catalog.js';
import { attributeType, isExposed, pageSize, type AttributeModel, type DataClassModel } from '../../model/types.js';
import { didYouMean } from '../../util/suggest.js';
import { REST_PREFIX } from '../constants.js';

type Json = Record<string, unknown>;

export function exposedDataClasses(ds: Datastore): DataClassModel[] {
  return ds.model.dataClasses.filter((dc) => dc.exposed);
}

/** The exposed dataclass of that name, or UNKNOWN_DATACLASS naming the closest one. */
export function exposedDataClass(ds: Datastore, name: string): DataClassModel {
  const dc = ds.model.dataClassesByName.get(name);
  if (dc && dc.exposed) return dc;
  const names = exposedDataClasses(ds).map((d) => d.name);
  throw new DatasetError('UNKNOWN_DATACLASS', `The "${name}" dataclass cannot be found${didYouMean(name, names)}`);
}

export function catalogList(ds: Datastore): Json {
  return withDatastoreMethods(ds, {
    dataClasses: exposedDataClasses(ds).map((dc) => ({
      name: dc.name,
      uri: `${REST_PREFIX}/$catalog/${dc.name}`,
      dataURI: `${REST_PREFIX}/${dc.name}`,
    })),
  });
}

export function catalogAll(ds: Datastore): Json {
  return withDatastoreMethods(ds, { dataClasses: exposedDataClasses(ds).map((dc) => describeDataClass(ds, dc, false)) });
}

/** The datastore class's exposed functions, as a top-level `methods` array when there are some. */
function withDatastoreMethods(ds: Datastore, out: Json): Json {
  const methods = datastoreMethods(ds);
  return methods.length > 0 ? { ...out, methods } : out;
}

export function catalogDataClass(ds: Datastore, name: string): Json {
  return describeDataClass(ds, exposedDataClass(ds, name), true);
}

/** `single`: the one-dataclass answer, which always states defaultTopSize (spec "Catalog dataclass description"). */
function describeDataClass(ds: Datastore, dc: DataClassModel, single: boolean): Json {
  const out: Json = {
    name: dc.name,
    className: dc.className,
    collectionName: dc.collectionName,
    tableNumber: dc.tableNumber,
    scope: 'public',
    dataURI: `${REST_PREFIX}/${dc.name}`,
  };
  if (single || dc.defaultTopSize !== undefined) out.defaultTopSize = pageSize(dc);
  out.extraProperties = dc.extraProperties;
  out.attributes = dc.attributes.filter(isExposed).map((a) => describeAttribute(ds, a));
  out.key = [{ name: dc.key.name }];
  const methods = dataClassMethods(ds.dataClass(dc.name) as DataClass);
  if (methods.length > 0) out.methods = methods;
  return out;
}

function describeAttribute(ds: Datastore, a: AttributeModel): Json {
  const out: Json = { name: a.name, kind: a.kind };
  if (a.fieldPos > 0) out.fieldPos = a.fieldPos;
  out.scope = 'public';
  if (a.kind === 'storage' && a.indexed) out.indexed = true;
  out.type = attributeType(a);
  switch (a.kind) {
    case 'storage':
      if (a.identifying) out.identifying = true;
      if (a.dateOnly) out.simpleDate = true;
      break;
    case 'relatedEntity':
      if (isExposed(a.foreignKey)) out.foreignKey = a.foreignKey.name;
      if (a.inverse && isExposed(a.inverse)) out.inverseName = a.inverse.name;
      out.path = a.target.name;
      break;
    case 'relatedEntities':
      out.inverseName = a.inverse.name;
      out.reversePath = true;
      out.path = a.inverse.name;
      break;
    case 'alias':
      out.path = a.path;
      out.readOnly = true;
      break;
    case 'calculated':
      // writable only with a set function
      if (!ds.calculatedLookup(a)?.set) out.readOnly = true;
      break;
    default: {
      const never: never = a;
      return never;
    }
  }
  if (a.defaultFormat) out.defaultFormat = a.defaultFormat;
  if (a.multiLine) out.multiLine = true;
  if (a.extraProperties) out.extraProperties = a.extraProperties;
  return out;
}
