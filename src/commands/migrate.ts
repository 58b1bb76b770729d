// dataset-rest migrate: not written yet (issue 18). Replaced by its implementation this session.

export async function main(_args: readonly string[]): Promise<number> {
  process.stderr.write('dataset-rest: migrate is not available yet\n');
  return 2;
}
