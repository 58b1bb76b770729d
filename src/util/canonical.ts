// The one copy of the classes user code extends. A project's class modules are loaded with tsx's
// tsImport, which evaluates `dataset-rest` (src/index.ts and everything it imports) a second
// time, in its own namespace. Classes from that copy would not be the core's: `extends Entity`
// would extend a stranger. So the public module hands out the classes registered here, on a
// process-wide symbol: the core registers its own before any user module loads.

const REGISTRY = Symbol.for('dataset-rest.public-classes');

type Registry = Record<string, unknown>;

function registry(): Registry {
  const g = globalThis as unknown as { [REGISTRY]?: Registry };
  return (g[REGISTRY] ??= {});
}

/** The value registered under name, registering this one when none is. */
export function canonical<T>(name: string, value: T): T {
  const r = registry();
  if (!(name in r)) r[name] = value;
  return r[name] as T;
}
