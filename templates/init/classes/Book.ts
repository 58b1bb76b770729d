// The Book dataclass class: its methods are methods of ds.Book; those marked @exposed are callable over REST.

import { DataClass, exposed, onHttpGet, params, type EntitySelection } from 'dataset-rest';

export default class Book extends DataClass {
  /** The books published in `year` or later, oldest first (GET /rest/Book/since?$params=[1970], or POST [1970]). */
  @exposed
  @onHttpGet
  @params('year: number')
  since(year: number): EntitySelection {
    return this.query('year >= :1', year).orderBy('year');
  }
}
