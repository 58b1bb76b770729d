// The demo's DataStore class: its methods are methods of the datastore (ds); the exposed ones are
// called over REST at /rest/$catalog/{function}.

import { Datastore, DatasetError, exposed, onHttpGet, type Entity, type EntitySelection } from 'dataset-rest';

export default class DataStore extends Datastore {
  /** How many entities each dataclass holds (POST or GET /rest/$catalog/counts). */
  @exposed
  @onHttpGet
  async counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const dc of this.dataClasses()) out[dc.name] = await dc.all().length;
    return out;
  }

  /** The best-paid employee: an entity result, answered as the entity itself. */
  @exposed
  topEarner(): Promise<Entity | null> {
    return this.dataClass('Employee')!.all().orderBy('salary desc').first();
  }

  /** Employees earning at least `min`: a selection result, answered as a collection. */
  @exposed
  earningAtLeast(min: number): EntitySelection {
    if (typeof min !== 'number') throw new DatasetError('INVALID_VALUE', `earningAtLeast takes a number, got ${JSON.stringify(min)}`);
    return this.dataClass('Employee')!.query('salary >= :1', min);
  }

  /** Raises every salary of a company by a percentage, all or nothing: a rising is refused past 50%. */
  @exposed
  async raiseSalaries(companyID: number, percent: number): Promise<number> {
    return this.transaction(async () => {
      let n = 0;
      for await (const e of this.dataClass('Employee')!.query('employer.ID = :1', companyID)) {
        e.set('salary', Math.round(Number(e.get('salary') ?? 0) * (1 + percent / 100)));
        await e.save();
        n++;
        if (percent > 50) throw new Error(`a ${percent}% raise needs a board decision`);
      }
      return n;
    });
  }

  /** Saves an employee given as an entity parameter ({"__DATACLASS": "Employee", "__ENTITY": true, …}): answers it. */
  @exposed
  async hire(employee: Entity): Promise<Entity> {
    if (employee.getDataClass().name !== 'Employee') throw new DatasetError('INVALID_VALUE', 'hire takes an Employee entity');
    await employee.save();
    return employee;
  }

  /** The salaries of a selection parameter ({"__DATASET": "<entity set id>", "__ENTITIES": true}). */
  @exposed
  payroll(staff: EntitySelection): Promise<number> {
    return staff.sum('salary');
  }

  /** Waits `ms` milliseconds, then answers what it was given: a slow function, for trying time limits. */
  @exposed
  async pause(ms: number, tag?: string): Promise<{ ms: number; tag: string | null }> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { ms, tag: tag ?? null };
  }

  /** Not exposed: REST cannot call it. */
  secretReport(): string {
    return 'internal';
  }
}
