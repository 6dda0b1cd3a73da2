// This browser's session with the runtime.
//
// Cookies are kept apart by host, not by port, so a cookie set by the runtime on 127.0.0.1 would go
// with every request this browser makes to any other program on 127.0.0.1. The runtime therefore
// scopes its session cookie to a path of the session's own, /s/<id>/, and gives the id to this page
// only, in the fragment of the sign-in redirect (which no server sees). The page keeps it in its
// origin's storage (kept apart by port) and sends its API requests under that path; the browser
// sends the cookie there and nowhere else. A page from another port never learns the path, so it
// never gets the cookie.

const KEY = 'ensemble.session';
const ID = /^[A-Za-z0-9_-]{8,64}$/;

/** Where the session's id is kept: the origin's localStorage, or nothing where there is none. */
export interface SessionStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

function store(): SessionStore | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null; // storage turned off
  }
}

/**
 * Takes the session's id from a sign-in redirect's fragment (#signin=<id>), keeps it, and returns
 * the address to show instead (the board). Returns null when the fragment holds none.
 */
export function takeSignin(hash: string, s: SessionStore | null = store()): string | null {
  const m = /^#signin=(.*)$/.exec(hash);
  if (!m) return null;
  if (ID.test(m[1])) s?.setItem(KEY, m[1]);
  return '#/';
}

/** The path this browser's API requests go under: "/s/<id>", or "" without a session. */
export function sessionBase(s: SessionStore | null = store()): string {
  const id = s?.getItem(KEY) ?? '';
  return ID.test(id) ? `/s/${id}` : '';
}

/** path ("/api/…") as this browser sends it: under its session's path when it has one. */
export function apiURL(path: string, s: SessionStore | null = store()): string {
  return path.startsWith('/api/') ? sessionBase(s) + path : path;
}

/** Forgets the session (signed out, or refused). */
export function forgetSession(s: SessionStore | null = store()): void {
  s?.removeItem(KEY);
}
