// Who the explorer runs as: $info's session, and login and logout through $directory (4D's
// Wakanda-era routes, which call the datastore's directory hooks); a datastore without them
// (7051) is asked through its authentify function instead.

import { HIDDEN, REST, RestError, rest } from './api';

export interface SessionInfo {
  readonly userName: string;
  readonly privileges: readonly string[];
}

export async function currentSession(): Promise<SessionInfo> {
  const info = await rest<{ session?: { userName?: string; privileges?: string[] } }>(`${REST}/$info`);
  return { userName: info.session?.userName ?? '', privileges: info.session?.privileges ?? [] };
}

const NO_DIRECTORY = 7051;

/** Logs in; a wrong name or password is a RestError (401). */
export async function login(userName: string, password: string): Promise<void> {
  try {
    await rest(`${REST}/$directory/login`, { body: [userName, password], shownBody: [userName, HIDDEN] });
  } catch (error) {
    if (!(error instanceof RestError && error.errCodes.includes(NO_DIRECTORY))) throw error;
    const answer = await rest<unknown>(`${REST}/$catalog/authentify`, { body: [{ userName, password }], shownBody: [{ userName, password: HIDDEN }] });
    if (answer === false || (answer as { result?: unknown } | null)?.result === false) throw new RestError(401, [{ message: 'the user name or the password is wrong', errCode: 0, componentSignature: 'xplr' }], answer);
  }
}

export async function logout(): Promise<void> {
  await rest(`${REST}/$directory/logout`, { body: [] });
}
