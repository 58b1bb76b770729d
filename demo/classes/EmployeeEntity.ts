// The demo's Employee entity class: a calculated attribute (fullName), a constructor default,
// a touched event and a validation event with mild and serious errors (reference §6.2, §6.5).

import { Entity, exposed, onHttpGet, params, type CalculatedOrderByEvent, type CalculatedQueryEvent, type EntityEvent, type EventErrorObject } from 'dataset-rest';

/** Salaries above this are refused with a mild validation error (a typo, most likely). */
const SALARY_CEILING = 10_000_000;

export default class EmployeeEntity extends Entity {
  // Attributes are accessors of the entity: declare them (never as class fields, which would hide them).
  declare firstName: string | null;
  declare lastName: string | null;
  declare salary: number | null;
  declare dailyHours: number | null;

  /** 4D's constructor event: defaults for new employees; values the caller sets afterwards win. */
  constructor() {
    super();
    if (this.isNew()) this.dailyHours = 8 * 3_600_000;
  }

  /** fullName: "First Last" (the model declares it as a calculated string). */
  get fullName(): string {
    return [this.firstName, this.lastName].filter((s) => s).join(' ');
  }

  /** fullName = "Anna Smith" finds first and last name; one word finds either. */
  static queryFullName(event: CalculatedQueryEvent): { query: string; parameters: unknown[] } {
    const op = event.operator;
    if (['<', '<=', '>', '>='].includes(op)) return { query: `lastName ${op} :1`, parameters: [event.value] };
    if (op === 'IN') return { query: 'firstName in :1 or lastName in :1', parameters: [event.value] };
    const negate = op === '!=' || op === '!==';
    const base = op === '!=' ? '==' : op === '!==' ? '===' : op;
    const [first, ...rest] = String(event.value ?? '').trim().split(/\s+/);
    const query = rest.length > 0 ? `firstName ${base} :1 and lastName ${base} :2` : `firstName ${base} :1 or lastName ${base} :1`;
    return { query: negate ? `not(${query})` : query, parameters: rest.length > 0 ? [first, rest.join(' ')] : [first] };
  }

  static orderByFullName(event: CalculatedOrderByEvent): string {
    return event.descending ? 'firstName desc, lastName desc' : 'firstName, lastName';
  }

  /** Names are kept without surrounding spaces, whoever sets them. */
  touchedLastName(): void {
    const v = this.lastName;
    if (typeof v === 'string' && v !== v.trim()) this.lastName = v.trim();
  }

  /** A negative salary is a serious error; an implausibly high one a mild one. */
  validateSaveSalary(event: EntityEvent): EventErrorObject | undefined {
    const salary = this.salary;
    if (salary !== null && salary < 0) {
      return { errCode: 1001, message: `${event.dataClassName}.${String(event.attributeName)} cannot be negative`, seriousError: true };
    }
    if (salary !== null && salary > SALARY_CEILING) {
      return { errCode: 1002, message: `a salary above ${SALARY_CEILING} needs a second look`, extraDescription: { ceiling: SALARY_CEILING } };
    }
    return undefined;
  }

  /** Raises this employee's salary by a percentage and saves (POST /rest/Employee(key)/raise, body [percent]): answers the entity. */
  @exposed
  @params('percent: number')
  async raise(percent: number): Promise<this> {
    this.salary = Math.round((this.salary ?? 0) * (1 + percent / 100));
    await this.save();
    return this;
  }

  /** Years of service, whole (GET /rest/Employee(key)/seniority). */
  @exposed
  @onHttpGet
  @params()
  seniority(): number {
    const hired = this.get('hiredAt') as Date | null;
    return hired ? Math.floor((Date.now() - hired.getTime()) / (365.25 * 86_400_000)) : 0;
  }
}
