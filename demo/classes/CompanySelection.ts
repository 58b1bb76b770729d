// The demo's Company selection class: its methods are methods of every selection of companies.

import { EntitySelection, exposed, params } from 'dataset-rest';

export default class CompanySelection extends EntitySelection {
  /** The sum of the revenues of the companies of the selection (POST /rest/Company/totalRevenues). */
  @exposed
  @params()
  async totalRevenues(): Promise<number> {
    let total = 0;
    for await (const c of this) total += Number(c.get('revenues') ?? 0);
    return total;
  }
}
