// The demo's DataStore class: its methods are methods of the datastore (ds).

import { Datastore, exposed, onHttpGet } from 'dataset-rest';

export default class DataStore extends Datastore {
  /** How many entities each dataclass holds (POST or GET /rest/$catalog/counts). */
  @exposed
  @onHttpGet
  async counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const dc of this.dataClasses()) out[dc.name] = await dc.all().length;
    return out;
  }
}
