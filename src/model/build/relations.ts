// The model's relation passes (model/load-model.ts). First the N→1 relations (relatedEntity):
// each finds its target dataclass and its foreign key — a storage attribute of its own dataclass
// whose type matches the target's key, or an implicit one made here (<name>ID, indexed) — so
// that, after it, every relatedEntity without a problem is finished and every foreign key
// exists as a storage attribute. Then the 1→N relations (relatedEntities), which need those: each
// finds its target selection and the relatedEntity of the target pointing back, and the two are
// made each other's inverse (a relatedEntity is the inverse of one relatedEntities at most), and
// gets its delete control (`deleteRule`: leave, the default; cascade; refuse).

import { didYouMean } from '../../util/suggest.js';
import { DELETE_RULES, INTEGER_TYPES, type AttributeModel, type DeleteRule, type DataClassModel, type StorageAttribute, type StorageType } from '../types.js';
import { NAME, attributesOf, checkRenamedFrom, omitPending, type Draft, type Fail, type Mutable, type Pending } from './checks.js';

/** Finishes every relatedEntity of the draft, adding the implicit foreign keys. */
export function resolveRelations(draft: Draft, fail: Fail): void {
  for (const dc of draft.classes) {
    const attrs = attributesOf(dc);
    for (let i = 0; i < attrs.length; i++) {
      const pending = attrs[i] as unknown as Pending;
      if (pending.kind !== 'relatedEntity' || !pending.__raw) continue;
      const relation = resolveRelation(dc, pending, draft, fail);
      if (relation) attrs[i] = relation;
    }
  }
}

/** One relatedEntity: finished (its foreign key added to its dataclass when implicit), or undefined (its problem reported, or its target's key's). */
function resolveRelation(dc: DataClassModel, pending: Pending, draft: Draft, fail: Fail): AttributeModel | undefined {
  const attrs = attributesOf(dc);
  const raw = pending.__raw!;
  const path = pending.__path;
  const target = typeof raw.type === 'string' ? draft.byName.get(raw.type) : undefined;
  if (!target) {
    fail(`${path}.type`, `relatedEntity '${raw.name}' must name a dataclass in 'type'; '${String(raw.type)}' is not one${didYouMean(String(raw.type), draft.byName.keys())}`);
    return undefined;
  }
  if (target.system) {
    fail(`${path}.type`, `relatedEntity '${raw.name}' names ${target.name}, which the server keeps for change tracking (its entities come and go with the drops it records): no relation may lead there`);
    return undefined;
  }
  if (raw.path !== undefined && raw.path !== target.name) fail(`${path}.path`, `for a relatedEntity, 'path' is the target dataclass name ('${target.name}')`);
  const fkName = raw.foreignKey ?? `${String(raw.name)}ID`;
  if (typeof fkName !== 'string' || !NAME.test(fkName)) {
    fail(`${path}.foreignKey`, 'must be an attribute name');
    return undefined;
  }
  let fk = attrs.find((a) => a.name === fkName);
  const caseClash = attrs.find((a) => a.name !== fkName && a.name.toLowerCase() === fkName.toLowerCase());
  if (!fk && caseClash) {
    fail(`${path}.foreignKey`, `the foreign key '${fkName}' would differ only by case from the attribute '${caseClash.name}'; name it in 'foreignKey'`);
    return undefined;
  }
  if (fk && fk.kind !== 'storage') {
    fail(`${path}.foreignKey`, `'${fkName}' is a ${fk.kind} attribute; a foreign key must be a storage attribute`);
    return undefined;
  }
  if (!target.key) return undefined; // already reported
  if (fk) {
    if (fk.identifying) fail(`${path}.foreignKey`, `'${fkName}' is the primary key of ${dc.name}; a foreign key must be another attribute`);
    else if (!keyTypesMatch(fk.type, target.key.type)) {
      fail(`${path}.foreignKey`, `'${fkName}' is ${fk.type} but ${target.name}'s key '${target.key.name}' is ${target.key.type}`);
    }
  } else {
    // a relation renamed takes its implicit foreign key along: <old>ID becomes <name>ID (storage/schema.ts)
    const from = checkRenamedFrom(raw.renamedFrom, raw.name as string, `${path}.renamedFrom`, fail);
    const oldKey = from === undefined || raw.foreignKey !== undefined ? undefined : `${from}ID`;
    fk = implicitForeignKey(dc, fkName, target.key.type, oldKey !== undefined && !attrs.some((a) => a.name.toLowerCase() === oldKey.toLowerCase()) ? oldKey : undefined);
    attrs.push(fk);
  }
  return { ...omitPending(pending), kind: 'relatedEntity', target, foreignKey: fk, inverse: undefined } as unknown as AttributeModel;
}

/** Finishes every relatedEntities of the draft, making it and the relatedEntity it goes back through each other's inverse. */
export function resolveInverses(draft: Draft, fail: Fail): void {
  for (const dc of draft.classes) {
    const attrs = attributesOf(dc);
    for (let i = 0; i < attrs.length; i++) {
      const pending = attrs[i] as unknown as Pending;
      if (pending.kind !== 'relatedEntities' || !pending.__raw) continue;
      const raw = pending.__raw;
      const path = pending.__path;
      const target = typeof raw.type === 'string' ? draft.byCollection.get(raw.type) : undefined;
      if (!target) {
        fail(`${path}.type`, `relatedEntities '${pending.name}' must name a selection ('<Dataclass>Selection') in 'type'; '${String(raw.type)}' is not one${didYouMean(String(raw.type), draft.byCollection.keys())}`);
        continue;
      }
      const inverse = target.attributes.find((a) => a.name === raw.path);
      if (typeof raw.path !== 'string' || !inverse) {
        fail(`${path}.path`, `must name the relatedEntity attribute of ${target.name} that points to ${dc.name}; '${String(raw.path)}' is not an attribute of ${target.name}${didYouMean(String(raw.path), target.attributes.map((a) => a.name))}`);
        continue;
      }
      if (inverse.kind === 'relatedEntity' && !inverse.target) continue; // its own problem is already reported
      if (inverse.kind !== 'relatedEntity' || inverse.target !== dc) {
        fail(`${path}.path`, `inverse mismatch: ${target.name}.${inverse.name} must be a relatedEntity to ${dc.name}, it is ${inverse.kind === 'relatedEntity' ? `a relatedEntity to ${inverse.target.name}` : `a ${inverse.kind} attribute`}`);
        continue;
      }
      if (raw.reversePath !== undefined && raw.reversePath !== true) fail(`${path}.reversePath`, 'can only be true');
      const deleteRule = raw.deleteRule ?? 'leave';
      if (!DELETE_RULES.includes(deleteRule as DeleteRule)) {
        fail(`${path}.deleteRule`, `must be one of ${DELETE_RULES.join(', ')} (what dropping a ${dc.name} does to its ${target.name} entities); got ${JSON.stringify(raw.deleteRule)}${didYouMean(String(raw.deleteRule), DELETE_RULES)}`);
      }
      const attr = { ...omitPending(pending), kind: 'relatedEntities', target, inverse, deleteRule } as unknown as AttributeModel;
      attrs[i] = attr;
      if (inverse.inverse) fail(`${path}.path`, `${target.name}.${inverse.name} is already the inverse of ${dc.name}.${inverse.inverse.name}`);
      else (inverse as Mutable<typeof inverse>).inverse = attr as never;
    }
  }
}

function implicitForeignKey(dc: DataClassModel, name: string, type: StorageType, renamedFrom: string | undefined): StorageAttribute {
  return {
    ...(renamedFrom !== undefined ? { renamedFrom } : {}),
    name, fieldPos: 0, exposed: true, dataClass: dc, kind: 'storage', type, column: name,
    identifying: false, autoincrement: false, autogenerate: false,
    // Foreign keys are always indexed: 1→N navigation filters on them.
    indexed: true, unique: false, dateOnly: false, notNull: false, implicit: true,
  };
}

function keyTypesMatch(a: StorageType, b: StorageType): boolean {
  return a === b || (INTEGER_TYPES.has(a) && INTEGER_TYPES.has(b));
}
