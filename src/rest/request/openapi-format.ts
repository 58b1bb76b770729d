// The one parameter of GET /rest/$openapi: `format=json` (the default) or `format=yaml`. It has no
// '$' (the $-options are the data API's, and parseOptions ignores names without one), so it is
// read here, from the query string as sent; any other value is refused rather than ignored.

import { DatasetError } from '../../errors/dataset-error.js';
import { didYouMean } from '../../util/suggest.js';

export const OPENAPI_FORMATS = ['json', 'yaml'] as const;
export type OpenapiFormat = (typeof OPENAPI_FORMATS)[number];

/** The format a /rest/$openapi request target asks for (any case; `yml` is yaml). */
export function openapiFormat(url: string): OpenapiFormat {
  const q = url.indexOf('?');
  if (q < 0) return 'json';
  let values: string[];
  try {
    values = new URLSearchParams(url.slice(q + 1)).getAll('format');
  } catch {
    throw new DatasetError('MALFORMED_URL', 'bad percent-encoding in the query string of /rest/$openapi');
  }
  if (values.length === 0) return 'json';
  if (values.length > 1) throw new DatasetError('INVALID_OPTION', 'format is given twice: give format=json or format=yaml once');
  const v = values[0].trim().toLowerCase();
  const f = v === 'yml' ? 'yaml' : v;
  if (!(OPENAPI_FORMATS as readonly string[]).includes(f)) {
    throw new DatasetError('INVALID_OPTION', `/rest/$openapi answers format=json (the default) or format=yaml; got '${values[0].slice(0, 40)}'${didYouMean(f, OPENAPI_FORMATS)}`);
  }
  return f as OpenapiFormat;
}
