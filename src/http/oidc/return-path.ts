// Where a browser goes once signed in: the login's `redirect`, which anyone can write into a link.
// Only a path of this server is taken, so that a sign-in link can never send a freshly signed-in
// user to another site (an open redirect): "//evil.example" and "/\evil.example" are taken by
// browsers for other hosts, "https://…" is one; backslashes and control characters, which
// browsers read in ways of their own, are refused outright.

/** The default: the Data Explorer. */
export const DEFAULT_RETURN_PATH = '/$explorer';
const MAX_RETURN_PATH = 2048;
// (a base no request names: a path that resolves to another origin left it)
const BASE = 'http://return-path.invalid';

/** The same-origin path `value` means (normalised), or undefined when it is not one. */
export function sameOriginPath(value: string): string | undefined {
  if (value.length === 0 || value.length > MAX_RETURN_PATH) return undefined;
  if (!value.startsWith('/') || value.startsWith('//')) return undefined;
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\\\x00-\x20\x7f]/.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value, BASE);
  } catch {
    return undefined;
  }
  if (url.origin !== BASE) return undefined;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // (normalising may have made a path that browsers read as another host: "/.//evil")
  return path.startsWith('//') ? undefined : path;
}
