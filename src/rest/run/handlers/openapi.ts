// GET /rest/$openapi: the OpenAPI 3.1 document of what the caller's session may use (built in
// rest/openapi/), as JSON or, with format=yaml, as YAML.

import type { Action } from '../../plan/action.js';
import { documentText } from '../../openapi/document.js';
import { file, jsonText, type RestResponse } from '../../present/response.js';
import type { Scope } from '../../scope/scope.js';

export function openapi(scope: Scope, action: Extract<Action, { kind: 'openapi' }>): RestResponse {
  const text = documentText(scope, action.format);
  if (action.format === 'json') return jsonText(text);
  return file(200, { 'content-type': 'application/yaml; charset=utf-8' }, Buffer.from(text));
}
