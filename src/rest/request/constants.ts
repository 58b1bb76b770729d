// The REST API's own names, spelled once: its URL prefix and its $-options (the reserved
// properties of answers are in config/wire.ts).

/** The URL prefix of every REST resource. */
export const REST_PREFIX = '/rest';

/** Every $-option of the REST API; `implemented: false` ones answer OPTION_NOT_SUPPORTED for now. */
export const OPTIONS = {
  $top: true,
  $limit: true,
  $skip: true,
  $attributes: true,
  $expand: true,
  $asArray: true,
  $orderby: true,
  $method: true,
  $filter: true,
  $params: true,
  $queryplan: true,
  $querypath: true,
  $timeout: true,
  $savedfilter: true,
  $savedorderby: true,
  $compute: true,
  $distinct: true,
  $logicOperator: true,
  $operator: true,
  $otherCollection: true,
  $subOrderby: true,
  $atomic: true,
  $atOnce: true,
  $atonce: true,
  $refresh: true,
  $rawPict: true,
  $binary: true,
  $imageformat: true,
  $version: true,
  $lock: true,
  $clean: true,
  $emMethod: true,
  $format: true,
} as const satisfies Record<string, boolean>;

export type OptionName = keyof typeof OPTIONS;
