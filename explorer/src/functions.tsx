// Placeholder until its panel is built (issue 15, in progress).

import type { CollectionContext } from './panels';

export function FunctionsPanel(_props: CollectionContext) {
  return <p class="muted">Not built yet.</p>;
}
