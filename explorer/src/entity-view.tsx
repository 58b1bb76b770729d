// Placeholder until the entity form is built (issue 15, in progress).

import type { Catalog, DataClassInfo } from './catalog';

export interface EntityViewProps {
  readonly catalog: Catalog;
  readonly dc: DataClassInfo;
  /** undefined: a new entity */
  readonly entityKey: string | undefined;
}

export function EntityView(props: EntityViewProps) {
  return <p class="muted">{props.dc.name} {props.entityKey ?? 'new'}: the form is not built yet.</p>;
}
