// The demo's DataStore class: its methods are methods of the datastore (ds); the exposed ones are
// called over REST at /rest/$catalog/{function}.

import { setTimeout as sleep } from 'node:timers/promises';
import { verify } from '@node-rs/argon2';
import { callContext, Datastore, DatasetError, exposed, onHttpGet, params, session, type Entity, type EntitySelection } from 'dataset-rest';

/** An Argon2id hash of nothing anyone types: what an unknown user name's password is checked against. */
const UNKNOWN_USER_HASH = '$argon2id$v=19$m=19456,t=2,p=1$hGc6JYhFI4kMhsh9o64kTw$sBZz3uygU2igxfrMwrrpbVkQQQAONn3+H2yz2EhDgwQ';

export default class DataStore extends Datastore {
  /**
   * How many entities each dataclass holds (POST or GET /rest/$catalog/counts): those the caller
   * may read — the code runs with the caller's privileges, so the others refuse it (401/403).
   */
  @exposed
  @onHttpGet
  @params()
  async counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const dc of this.dataClasses()) {
      try {
        out[dc.name] = await dc.all().length;
      } catch (e) {
        if (!(e instanceof DatasetError) || (e.status !== 401 && e.status !== 403)) throw e;
      }
    }
    return out;
  }

  /** The best-paid employee: an entity result, answered as the entity itself. */
  @exposed
  @params()
  topEarner(): Promise<Entity | null> {
    return this.dataClass('Employee')!.all().orderBy('salary desc').first();
  }

  /** Employees earning at least `min`: a selection result, answered as a collection. */
  @exposed
  @params('min: number')
  earningAtLeast(min: number): EntitySelection {
    return this.dataClass('Employee')!.query('salary >= :1', min);
  }

  /** Raises every salary of a company by a percentage, all or nothing: a rising is refused past 50%. */
  @exposed
  @params('companyID: number', 'percent: number')
  async raiseSalaries(companyID: number, percent: number): Promise<number> {
    return this.transaction(async () => {
      let n = 0;
      for await (const e of this.dataClass('Employee')!.query('employer.ID = :1', companyID)) {
        e.set('salary', Math.round(Number(e.get('salary') ?? 0) * (1 + percent / 100)));
        await e.save();
        n++;
        // a business rule: the client is told why, with a status and a code of the application's own
        if (percent > 50) throw new DatasetError('REFUSED', `a ${percent}% raise needs a board decision`, { status: 422, errCode: 20001 });
      }
      return n;
    });
  }

  /**
   * Saves an employee given as an entity parameter ({"__DATACLASS": "Employee", "__ENTITY": true,
   * …}): answers it. Its declaration refuses anything but an Employee entity before the call (400).
   */
  @exposed
  @params('employee: EmployeeEntity')
  async hire(employee: Entity): Promise<Entity> {
    await employee.save();
    return employee;
  }

  /** The salaries of a selection parameter ({"__DATASET": "<entity set id>", "__ENTITIES": true}). */
  @exposed
  @params('staff: EmployeeSelection')
  payroll(staff: EntitySelection): Promise<number> {
    return staff.sum('salary');
  }

  /**
   * Waits `ms` milliseconds, then answers what it was given: a slow function, for trying time
   * limits. The wait stops at the call's time limit (its signal), as cancellable work should.
   */
  @exposed
  @params('ms: number', 'tag?: text')
  async pause(ms: number, tag?: string): Promise<{ ms: number; tag: string | null }> {
    await sleep(ms, undefined, { signal: callContext().signal });
    return { ms, tag: tag ?? null };
  }

  /** Employees hired from `since` on (and before `until`): dates declared with @params arrive as Date objects. */
  @exposed
  @params('since: date', 'until?: date')
  hiredBetween(since: Date, until?: Date): EntitySelection {
    const employees = this.dataClass('Employee')!;
    return until ? employees.query('hiredAt >= :1 and hiredAt < :2', since, until) : employees.query('hiredAt >= :1', since);
  }

  /**
   * Who called, read from the call's own context before and after a pause: two calls running at
   * once each see their own request (the X-Demo-Tag header), never module-level state.
   */
  @exposed
  @params('ms: number')
  async whoCalls(ms: number): Promise<{ before: unknown; after: unknown; function: string }> {
    const before = callContext().request.headers['x-demo-tag'] ?? null;
    await sleep(ms, undefined, { signal: callContext().signal });
    return { before, after: callContext().request.headers['x-demo-tag'] ?? null, function: callContext().name };
  }

  /** Computes for `ms` milliseconds without yielding: a CPU-bound function, stopped by the watchdog past the time limit. */
  @exposed
  @params('ms: number')
  spin(ms: number): number {
    const end = Date.now() + ms;
    let turns = 0;
    while (Date.now() < end) turns++;
    return turns;
  }

  /**
   * Renames a company, waits (10 s at most, and deliberately deaf to the time limit's signal),
   * then (when `confirm`, the default) saves it again, all in one transaction. Past the time limit
   * the transaction is rolled back at once, whatever the function does next: a second save is
   * refused (FUNCTION_TIMEOUT), and without one nothing commits either.
   */
  @exposed
  @params('companyID: number', 'name: text', 'ms: number', 'confirm?: boolean')
  async renameSlowly(companyID: number, name: string, ms: number, confirm = true): Promise<string> {
    return this.transaction(async () => {
      const company = await this.dataClass('Company')!.get(companyID);
      if (!company) throw new DatasetError('ENTITY_NOT_FOUND', `no company ${companyID}`);
      company.set('name', name);
      await company.save();
      await sleep(Math.min(ms, 10_000));
      if (confirm) {
        company.set('name', `${name} (confirmed)`);
        await company.save();
      }
      return String(company.get('name'));
    });
  }

  /**
   * Logs the session in (POST /rest/$catalog/authentify, body [{"userName": "alice", "password":
   * "alice123"}]): checks the password against the user's Argon2id hash and gives the session the
   * user's roles (roles.json). Always callable, even in force-login mode; roles.json's `promote`
   * lets it read the User dataclass, which guests may not. Failed attempts are counted by the
   * server (429 past its limit).
   */
  @exposed
  @params('credentials: object')
  async authentify(credentials: { userName?: unknown; password?: unknown }): Promise<{ success: boolean; userName?: string; privileges?: string[]; reason?: string }> {
    const { userName, password } = credentials;
    if (typeof userName !== 'string' || typeof password !== 'string') return { success: false, reason: 'give {"userName": "<name>", "password": "<text>"}' };
    if (!(await logIn(this, userName, password))) return { success: false, reason: 'unknown user name or wrong password' };
    return { success: true, userName: session().userName, privileges: session().getPrivileges() };
  }

  /**
   * The same login for 4D's legacy POST /rest/$directory/login (wakanda-client's directory.login):
   * true when the credentials are right (the session then has the user's roles). Not exposed: the
   * server calls it; roles.json promotes it to read User.
   */
  directoryLogin(userName: string, password: string): Promise<boolean> {
    return logIn(this, userName, password);
  }

  /** GET /rest/$directory/currentUser: the logged-in user's ID, name and full name, or null for a guest. */
  async directoryUser(): Promise<{ ID: number; userName: string; fullName: string } | null> {
    const user = await sessionUser(this);
    return user ? { ID: Number(user.get('ID')), userName: String(user.get('userName')), fullName: String(user.get('fullName') ?? '') } : null;
  }

  /** POST /rest/$directory/currentUserBelongsTo ["Editor"]: the user has that role (or the session that privilege). */
  async directoryBelongsTo(group: string): Promise<boolean> {
    const user = await sessionUser(this);
    if (!user) return false;
    // (the session's own privileges: inside this hook hasPrivilege() would count the accounts roles.json promotes it to)
    return rolesOf(user).some((r) => r.toLowerCase() === group.toLowerCase()) || session().getPrivileges().some((p) => p.toLowerCase() === group.toLowerCase());
  }

  /** Logs the session out (POST /rest/$catalog/logout): a guest again, under a new cookie. */
  @exposed
  @params()
  logout(): boolean {
    return session().clearPrivileges();
  }

  /** Not exposed: REST cannot call it. */
  secretReport(): string {
    return 'internal';
  }
}

/** A user's roles (roles.json), from its comma-separated roles attribute. */
function rolesOf(user: Entity): string[] {
  return String(user.get('roles') ?? '').split(',').map((r) => r.trim()).filter(Boolean);
}

// (helpers, not methods: user classes are applied to the datastore's prototype chain, not constructed, so # members are out of reach)

/** Checks the password against the user's Argon2id hash; when right, gives the session the user's roles. */
async function logIn(ds: Datastore, userName: string, password: string): Promise<boolean> {
  // === : the name as given, @ no wildcard ("a@" is no one's name)
  const user = await ds.dataClass('User')!.query('userName === :1', userName).first();
  // a hash is checked even for an unknown name: how long the answer takes says nothing of which names exist
  const ok = await verify(String(user?.get('passwordHash') ?? UNKNOWN_USER_HASH), password).catch(() => false);
  if (!user || !ok) return false;
  session().setPrivileges({ roles: rolesOf(user), userName: String(user.get('userName')) });
  return true;
}

/** The User entity of the session's user, or null for a guest. */
async function sessionUser(ds: Datastore): Promise<Entity | null> {
  const name = session().userName;
  return name === '' ? null : ds.dataClass('User')!.query('userName === :1', name).first();
}
