// The board's tasks, fetched while the app's scripts load and start (the largest answer of the first
// load), under this browser's session path as lib/session.ts keeps it: a <link rel="preload"> cannot
// name that path, and without it the cookie does not go along. lib/api.ts takes the answer for its
// first read of the tasks. A classic script, not a module, so it runs before the app's.
(function () {
  try {
    var ID = /^[A-Za-z0-9_-]{8,64}$/;
    var m = /^#signin=(.*)$/.exec(location.hash);
    var id = m ? m[1] : localStorage.getItem('ensemble.session');
    var base = id && ID.test(id) ? '/s/' + id : '';
    window.__ensembleTasks = fetch(base + '/api/tasks', {
      headers: { Accept: 'application/json' },
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch (e) {
    // No storage, no fetch: the app reads the tasks itself.
  }
})();
