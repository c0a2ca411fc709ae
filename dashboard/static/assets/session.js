// The signed-in key lives in this tab's sessionStorage only: it is sent as
// the bearer header, never put in a cookie or a URL, and closing the tab
// forgets it (docs/api.md "Dashboard").

const storageKey = 'mailroom.apiKey';

export const session = {
  key: sessionStorage.getItem(storageKey) || '',
  /** The calling key as GET /v1/api-keys/current describes it. */
  current: null,
  /** Why the last session ended, shown on the sign-in page. */
  endedBecause: '',

  signIn(key, current) {
    this.key = key;
    this.current = current;
    this.endedBecause = '';
    sessionStorage.setItem(storageKey, key);
  },

  signOut(reason = '') {
    this.key = '';
    this.current = null;
    this.endedBecause = reason;
    sessionStorage.removeItem(storageKey);
  },

  /** can reports whether the signed-in key holds scope. */
  can(scope) {
    return !!this.current && this.current.scopes.includes(scope);
  },
};
