// A shared singleton: the server makes its one instance when the project opens, and its exposed
// functions are called at /rest/$singleton/Tools/{function} (listed in the catalog's `singletons`).
// It keeps nothing in its fields: every server instance has its own copy, so shared state belongs
// in the datastore.

import { exposed, onHttpGet, params, Singleton, type EntitySelection } from 'dataset-rest';

export default class Tools extends Singleton {
  /** The server's clock (GET or POST /rest/$singleton/Tools/serverTime), for a client that checks its own. */
  @exposed
  @onHttpGet
  @params()
  serverTime(): { now: string; timeZone: string } {
    return { now: new Date().toISOString(), timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone };
  }

  /**
   * The companies of a country (POST /rest/$singleton/Tools/companiesIn with ["France"]; not
   * @onHttpGet, so a GET is refused): a selection, answered as a collection, read with the
   * caller's privileges.
   */
  @exposed
  @params('country: text')
  companiesIn(country: string): EntitySelection {
    return this.ds.dataClass('Company')!.query('city.country = :1', country).orderBy('name asc');
  }

  /** Not exposed: REST cannot call it (404), other server code can. */
  describe(): string {
    return `Tools singleton of ${this.ds.name}`;
  }
}
