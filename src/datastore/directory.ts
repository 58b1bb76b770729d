// 4D's legacy login, /rest/$directory (what wakanda-client's directory calls): the hooks a
// project's DataStore class defines to take part in it. The server calls them with the caller's
// session (session() inside them is the requester's) and with the privileges roles.json's
// `promote` gives "ds.directoryLogin", "ds.directoryUser" or "ds.directoryBelongsTo" (and
// session().hasPrivilege() inside them counts those too: judge the user by getPrivileges(), which
// does not); they are always callable (roles.json's `execute` does not apply to them), and they
// are not REST functions themselves (no @exposed: /rest/$catalog/directoryLogin does not call them).

/** Who the session is, as GET /rest/$directory/currentUser answers it. */
export interface DirectoryUser {
  readonly ID: string | number;
  readonly userName: string;
  readonly fullName: string;
}

/** Methods a DataStore class may define for /rest/$directory; each is optional. */
export interface DirectoryHooks {
  /**
   * POST /rest/$directory/login: checks the credentials and, when they are right, gives the session
   * its privileges (session().setPrivileges({ roles, userName })) and answers true; false refuses the
   * login (401). Without it, $directory/login answers 501: the datastore has no directory.
   */
  directoryLogin?(userName: string, password: string): boolean | Promise<boolean>;
  /**
   * GET /rest/$directory/currentUser: the session's user, or null for a guest. Without it: the
   * session's user name as ID, userName and fullName (null when it has none).
   */
  directoryUser?(): DirectoryUser | null | Promise<DirectoryUser | null>;
  /**
   * POST /rest/$directory/currentUserBelongsTo ["<group>"]: the session's user belongs to the group.
   * Without it: the session holds a privilege of that name (a guest belongs to nothing).
   */
  directoryBelongsTo?(group: string): boolean | Promise<boolean>;
}

export const DIRECTORY_HOOKS = ['directoryLogin', 'directoryUser', 'directoryBelongsTo'] as const;
export type DirectoryHook = (typeof DIRECTORY_HOOKS)[number];
