// dataset-rest import: not written yet (issue 18). Replaced by its implementation this session.

export async function main(_args: readonly string[]): Promise<number> {
  process.stderr.write('dataset-rest: import is not available yet\n');
  return 2;
}
