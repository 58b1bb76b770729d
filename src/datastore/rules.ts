// Rules every save meets, whoever asks for it (REST, a user function, a seed): a relation names an
// entity that exists (one the caller can see), and an image or blob attribute holds a file of its
// kind. The write checks them in its own transaction, after the saving event (so that what an
// event sets is checked too), and claims the file there (so one taken meanwhile is still
// refused). A save with events, and validate(), check them first as well, before any event runs.

import { DatasetError } from '../errors/dataset-error.js';
import type { RelatedEntityAttribute, StorageAttribute } from '../model/types.js';
import type { Access } from './access.js';
import type { DataClassCore } from './dataclass-core.js';

/** `values`: the storage attributes a save writes, with their values. */
export async function checkValues(dc: DataClassCore, values: ReadonlyMap<StorageAttribute, unknown>, access: Access): Promise<void> {
  for (const relation of relationsOf(dc)) {
    const key = values.get(relation.foreignKey);
    if (key === null || key === undefined) continue;
    if (!(await dc.core.classOf(relation.target).get(key, access))) {
      throw new DatasetError('ENTITY_NOT_FOUND', `${dc.name}.${relation.name}: Cannot find entity with "${String(key)}" key in the "${relation.target.name}" dataclass`);
    }
  }
  for (const [attr, value] of values) {
    if ((attr.type === 'image' || attr.type === 'blob') && value !== null && value !== undefined) await checkFile(dc, attr, Number(value));
  }
}

/** An image attribute takes an image; a blob attribute any file but an upload announced as an image. */
async function checkFile(dc: DataClassCore, attr: StorageAttribute, id: number): Promise<void> {
  const file = await dc.core.files.info(id);
  if (!file) return; // gone: the write's claim refuses it
  const image = attr.type === 'image';
  if (image ? file.kind === 'image' : !(file.kind === 'image' && file.upload !== null)) return;
  const how = (kind: string) => (kind === 'image' ? '$rawPict=true' : '$binary=true');
  const what = `${dc.name}.${attr.name} is ${image ? 'an image' : 'a blob'} attribute`;
  throw new DatasetError('UPLOAD_WRONG_KIND', file.upload !== null
    ? `${what}: it takes an upload made with ${how(image ? 'image' : 'binary')}, and upload ${file.upload} was made with ${how(file.kind)}`
    : `${what}: it takes an image, and the bytes of file ${id} are none (whatever type they were stored with)`);
}

const relations = new WeakMap<DataClassCore, RelatedEntityAttribute[]>();

function relationsOf(dc: DataClassCore): RelatedEntityAttribute[] {
  let list = relations.get(dc);
  if (!list) relations.set(dc, (list = dc.model.attributes.filter((a): a is RelatedEntityAttribute => a.kind === 'relatedEntity')));
  return list;
}
