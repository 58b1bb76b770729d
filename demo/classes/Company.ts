// The demo's Company dataclass class: its methods are methods of ds.Company.

import { DataClass, exposed, onHttpGet, params, type Entity } from 'dataset-rest';

export default class Company extends DataClass {
  /** The company with this code (compared without regard to case), or null (POST, or GET with $params, /rest/Company/byCode). */
  @exposed
  @onHttpGet
  @params('code: text')
  byCode(code: string): Promise<Entity | null> {
    return this.query('companyCode = :1', code).first();
  }
}
