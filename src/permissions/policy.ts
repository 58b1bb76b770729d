// Who may do what under a roles.json (4D's semantics, reference §5.5–5.6): expanding a session's
// roles and privileges, and answering, per session privilege set, whether it may read, create,
// update or drop in a dataclass or an attribute, and run a function. Owns the decision rules; the
// file's grammar and name checks are roles-file.ts's. The REST layer asks on every request and
// every read, so the lists are compiled once and each privilege set's answers are memoised.

import { GUEST, type DataAction, type Permission, type RolesFile } from './roles-file.js';

export type { DataAction } from './roles-file.js';


export interface Grants {
  /** the session holds no privilege (besides the implicit guest) */
  readonly guest: boolean;
  /** the privilege names held, as declared in roles.json (roles and includes expanded, `guest` not listed), sorted */
  readonly privileges: readonly string[];
  dataClass(dataClass: string, action: DataAction | 'execute'): boolean;
  attribute(dataClass: string, attribute: string, action: DataAction): boolean;
  /** may run this function: resource "ds.fn", "DataClass.fn" or "Singleton.fn" */
  execute(resource: string): boolean;
}

type ListAction = DataAction | 'execute';
/** The lower-cased privilege names a present, non-empty action list names: holding one allows. */
type Allowed = ReadonlySet<string>;
/** An entry's lists by action; an absent or empty list is not there (4D 21's default `ds` entry has empty lists meaning "nothing said"). */
type Lists<A extends string> = Readonly<Partial<Record<A, Allowed>>>;

const LIST_ACTIONS: readonly ListAction[] = ['read', 'create', 'update', 'drop', 'execute'];
const DATA_ACTIONS: readonly DataAction[] = ['read', 'create', 'update', 'drop'];
/** 4D lets every session log in, whatever roles.json says (reference §5.3). */
const ALWAYS_EXECUTABLE = 'ds.authentify';

/** Grants of every action on everything: no roles.json, or the server's own work. */
class AllGrants implements Grants {
  constructor(readonly guest: boolean, readonly privileges: readonly string[]) {}
  dataClass(): boolean { return true; }
  attribute(): boolean { return true; }
  execute(): boolean { return true; }
}

export class Policy {
  /** every action on everything (for the server's own work) */
  static readonly ALL: Grants = new AllGrants(false, []);

  /** No roles.json: everything allowed for everyone. */
  static open(): Policy {
    return new Policy(undefined);
  }

  static fromFile(roles: RolesFile): Policy {
    return new Policy(new CompiledRules(roles));
  }

  /** true only for Policy.open() */
  readonly isOpen: boolean;
  readonly forceLogin: boolean;
  /** Grants by privilege set: the sorted lower-cased names joined */
  readonly #grants = new Map<string, Grants>();
  /** Grants by list (a session's list is read once and shared by its requests: found again without a key) */
  readonly #byList = new WeakMap<readonly string[], Grants>();

  private constructor(private readonly rules: CompiledRules | undefined) {
    this.isOpen = rules === undefined;
    this.forceLogin = rules?.forceLogin ?? false;
  }

  /** privilege names after expanding roles and (transitive, cycle-safe) includes; unknown names ignored; names as declared in roles.json; sorted, no duplicates, no "guest" */
  expand(input: { readonly privileges?: readonly string[]; readonly roles?: readonly string[] }): string[] {
    const rules = this.rules;
    if (rules === undefined) return [];
    const held = new Set<string>();
    for (const name of input.privileges ?? []) for (const p of rules.closure.get(name.toLowerCase()) ?? []) held.add(p);
    for (const name of input.roles ?? []) for (const p of rules.roles.get(name.toLowerCase()) ?? []) held.add(p);
    return rules.declaredNames(held);
  }

  /** The role roles.json declares under this name (any case), as it declares it; undefined: none. */
  role(name: string): string | undefined {
    return this.rules?.roleNames.get(name.toLowerCase());
  }

  /** The roles roles.json declares, as declared. */
  roleList(): string[] {
    return [...(this.rules?.roleNames.values() ?? [])];
  }

  /** The privileges roles.json declares, as declared. */
  privilegeList(): string[] {
    return [...(this.rules?.declared.values() ?? [])];
  }

  /** the privileges a function's `promote` adds while it runs (expanded), [] if none */
  promotes(resource: string): string[] {
    return [...this.rules?.promotionsOf(resource) ?? []];
  }

  /** Grants of a session holding these (already expanded) privileges, one object per distinct set. (The list must not change afterwards: it is remembered.) */
  grantsFor(privileges: readonly string[]): Grants {
    let grants = this.#byList.get(privileges);
    if (grants === undefined) this.#byList.set(privileges, (grants = this.#grantsOfSet(privileges)));
    return grants;
  }

  #grantsOfSet(privileges: readonly string[]): Grants {
    const rules = this.rules;
    const held = new Set<string>();
    for (const name of privileges) {
      const lower = name.toLowerCase();
      // Undeclared names decide nothing: leaving them out keeps one entry per set that matters.
      if (lower !== GUEST && (rules === undefined || rules.declared.has(lower))) held.add(lower);
    }
    const key = [...held].sort().join('\n');
    let grants = this.#grants.get(key);
    if (grants === undefined) {
      grants = rules === undefined
        ? new AllGrants(held.size === 0, [...new Set(privileges.filter((p) => p.toLowerCase() !== GUEST))].sort())
        : new SessionGrants(rules, held);
      this.#grants.set(key, grants);
    }
    return grants;
  }
}

/** A roles.json turned into lookups: lower-cased names throughout, lists resolved per resource. */
class CompiledRules {
  readonly restrictedByDefault: boolean;
  readonly forceLogin: boolean;
  /** lower-cased privilege name → as declared */
  readonly declared = new Map<string, string>();
  /** privilege → itself and all it includes, transitively (lower-cased, guest left out) */
  readonly closure = new Map<string, ReadonlySet<string>>();
  /** role → its privileges expanded */
  readonly roles = new Map<string, ReadonlySet<string>>();
  /** lower-cased role name → as declared */
  readonly roleNames = new Map<string, string>();
  /** method resource → the privileges its promote adds, expanded, as declared */
  readonly promotions = new Map<string, readonly string[]>();
  readonly #datastore: Lists<ListAction>;
  /** dataclass → its lists, the datastore's filling in each action it does not name */
  readonly #dataClasses = new Map<string, Lists<ListAction>>();
  /** "DataClass.attribute" → its own lists (they add to the dataclass's) */
  readonly #attributes = new Map<string, Lists<DataAction>>();
  /** method resource → its execute list (singleton functions' too: "Tools.ping") */
  readonly #methods = new Map<string, Allowed>();
  /** singleton class → its execute list, if its entry has one (its functions fall back on it, then on the datastore's) */
  readonly #singletons = new Map<string, Allowed | undefined>();
  /** singleton class → its promote list as written (added to each of its functions' own) */
  readonly #singletonPromotes = new Map<string, readonly string[]>();
  /** function resource → the execute list that decides it, found once */
  readonly #executeLists = new Map<string, Allowed | undefined>();

  constructor(file: RolesFile) {
    this.restrictedByDefault = file.restrictedByDefault;
    this.forceLogin = file.forceLogin;
    const includes = new Map<string, string[]>();
    for (const { privilege, includes: included } of file.privileges) {
      this.declared.set(privilege.toLowerCase(), privilege);
      includes.set(privilege.toLowerCase(), included.map((n) => n.toLowerCase()));
    }
    for (const name of this.declared.keys()) this.closure.set(name, reachable(name, includes));
    for (const { role, privileges } of file.roles) {
      const expanded = new Set<string>();
      for (const p of privileges) for (const q of this.closure.get(p.toLowerCase()) ?? []) expanded.add(q);
      this.roles.set(role.toLowerCase(), expanded);
      this.roleNames.set(role.toLowerCase(), role);
    }

    const entries = (type: Permission['type']): Permission[] => file.permissions.filter((p) => p.type === type);
    this.#datastore = listsOf(entries('datastore').find((p) => p.applyTo === 'ds'), LIST_ACTIONS);
    for (const entry of entries('dataclass')) {
      // a dataclass-level list overrides the datastore's, action by action
      this.#dataClasses.set(entry.applyTo, { ...this.#datastore, ...listsOf(entry, LIST_ACTIONS) });
    }
    for (const entry of entries('attribute')) this.#attributes.set(entry.applyTo, listsOf(entry, DATA_ACTIONS));
    for (const entry of [...entries('method'), ...entries('singletonMethod')]) {
      const { execute } = listsOf(entry, ['execute']);
      if (execute) this.#methods.set(entry.applyTo, execute);
      this.#promote(entry.applyTo, entry.promote);
    }
    // a singleton entry speaks for each of its functions: its execute list where the function has
    // none of its own, its promote added to the function's
    for (const entry of entries('singleton')) {
      this.#singletons.set(entry.applyTo, listsOf(entry, ['execute']).execute);
      if ((entry.promote ?? []).length > 0) this.#singletonPromotes.set(entry.applyTo, entry.promote ?? []);
    }
  }

  #promote(resource: string, names: readonly string[] | undefined): void {
    const promoted = new Set<string>();
    for (const p of names ?? []) for (const q of this.closure.get(p.toLowerCase()) ?? []) promoted.add(q);
    if (promoted.size > 0) this.promotions.set(resource, this.declaredNames(promoted));
  }

  /** the privileges a function's promote adds (a singleton function's: its own and its class's), expanded, as declared */
  promotionsOf(resource: string): readonly string[] {
    const own = this.promotions.get(resource) ?? [];
    const dot = resource.indexOf('.');
    const byClass = dot < 0 ? undefined : this.#singletonPromotes.get(resource.slice(0, dot));
    if (byClass === undefined) return own;
    const promoted = new Set<string>(own.map((n) => n.toLowerCase()));
    for (const p of byClass) for (const q of this.closure.get(p.toLowerCase()) ?? []) promoted.add(q);
    return this.declaredNames(promoted);
  }

  /** lower-cased names → as declared, sorted */
  declaredNames(names: Iterable<string>): string[] {
    const out: string[] = [];
    for (const name of names) {
      const declared = this.declared.get(name);
      if (declared !== undefined && name !== GUEST) out.push(declared);
    }
    return out.sort();
  }

  dataClassList(dataClass: string, action: ListAction): Allowed | undefined {
    return (this.#dataClasses.get(dataClass) ?? this.#datastore)[action];
  }

  attributeList(dataClass: string, attribute: string, action: DataAction): Allowed | undefined {
    return this.#attributes.get(`${dataClass}.${attribute}`)?.[action];
  }

  /** The method's own list, else (for "DataClass.fn") its dataclass's or (for "Singleton.fn") its singleton's, else the datastore's. */
  executeList(resource: string): Allowed | undefined {
    if (this.#executeLists.has(resource)) return this.#executeLists.get(resource);
    const own = this.#methods.get(resource);
    const dot = resource.indexOf('.');
    const owner = dot < 0 ? 'ds' : resource.slice(0, dot);
    // (a singleton is never named as a dataclass: the class loader takes such a name for the dataclass's class)
    const list = own ?? this.#singletons.get(owner) ?? (owner === 'ds' ? this.#datastore.execute : this.dataClassList(owner, 'execute'));
    this.#executeLists.set(resource, list);
    return list;
  }
}

/** The answers for one privilege set, each worked out on first question and kept. */
class SessionGrants implements Grants {
  readonly guest: boolean;
  readonly privileges: readonly string[];
  /** What a resource no list speaks of allows: in force-login mode a guest gets only explicit grants. */
  readonly #byDefault: boolean;
  /** the held privileges, lower-cased, and guest */
  readonly #held: ReadonlySet<string>;
  readonly #dataClassAnswers = new Map<string, boolean>();
  readonly #attributeAnswers = new Map<string, boolean>();
  readonly #executeAnswers = new Map<string, boolean>();

  constructor(private readonly rules: CompiledRules, held: ReadonlySet<string>) {
    this.guest = held.size === 0;
    this.privileges = rules.declaredNames(held);
    this.#held = new Set([...held, GUEST]);
    this.#byDefault = !rules.restrictedByDefault && !(rules.forceLogin && this.guest);
  }

  dataClass(dataClass: string, action: ListAction): boolean {
    const key = `${action}\n${dataClass}`;
    let answer = this.#dataClassAnswers.get(key);
    if (answer === undefined) {
      answer = this.#allows(this.rules.dataClassList(dataClass, action))
        // update and drop need read as well; create does not (reference §5.5)
        && (action === 'update' || action === 'drop' ? this.dataClass(dataClass, 'read') : true);
      this.#dataClassAnswers.set(key, answer);
    }
    return answer;
  }

  attribute(dataClass: string, attribute: string, action: DataAction): boolean {
    const key = `${action}\n${dataClass}\n${attribute}`;
    let answer = this.#attributeAnswers.get(key);
    if (answer === undefined) {
      // An attribute's list adds to its dataclass's: the session needs both. Updating a value needs
      // reading it; dropping an entity needs reading a value only where the attribute has a drop
      // list of its own (the dataclass's drop already needs the dataclass's read: an entity whose
      // salary the session may not read can still be deleted by one that may delete employees).
      const own = this.rules.attributeList(dataClass, attribute, action);
      answer = this.dataClass(dataClass, action)
        && this.#names(own)
        && (action === 'update' || (action === 'drop' && own !== undefined) ? this.attribute(dataClass, attribute, 'read') : true);
      this.#attributeAnswers.set(key, answer);
    }
    return answer;
  }

  execute(resource: string): boolean {
    if (resource === ALWAYS_EXECUTABLE) return true;
    let answer = this.#executeAnswers.get(resource);
    if (answer === undefined) {
      answer = this.#allows(this.rules.executeList(resource));
      this.#executeAnswers.set(resource, answer);
    }
    return answer;
  }

  /** A list decides when there is one; otherwise the default does. */
  #allows(list: Allowed | undefined): boolean {
    return list === undefined ? this.#byDefault : this.#names(list);
  }

  /** Whether a list (if any) names a privilege held; no list adds no condition. */
  #names(list: Allowed | undefined): boolean {
    if (list === undefined) return true;
    for (const name of this.#held) if (list.has(name)) return true;
    return false;
  }
}

/** An entry's present, non-empty lists for these actions, lower-cased. */
function listsOf<A extends ListAction>(entry: Permission | undefined, actions: readonly A[]): Lists<A> {
  const lists: Partial<Record<A, Allowed>> = {};
  for (const action of actions) {
    const names = entry?.[action];
    if (names !== undefined && names.length > 0) lists[action] = new Set(names.map((n) => n.toLowerCase()));
  }
  return lists;
}

/** A privilege and everything it includes, transitively; a cycle just stops where it closes. */
function reachable(start: string, includes: ReadonlyMap<string, readonly string[]>): ReadonlySet<string> {
  const seen = new Set<string>();
  const pending = [start];
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (seen.has(name)) continue;
    seen.add(name);
    pending.push(...includes.get(name) ?? []);
  }
  seen.delete(GUEST);
  return seen;
}

