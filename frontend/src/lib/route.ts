// The hash routes: the board (""), a task's page (#/task/<id>, optionally /run/<job id>),
// Needs me (#/needs) and Settings (#/settings, or one of its sections: #/settings/assistant).

export type Route =
  | { name: 'board' }
  | { name: 'task'; id: string; run?: string }
  | { name: 'needs' }
  | { name: 'settings'; section?: string };

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  const parts = h.split('/').map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  if (parts[0] === 'task' && parts[1]) {
    return parts[2] === 'run' && parts[3] ? { name: 'task', id: parts[1], run: parts[3] } : { name: 'task', id: parts[1] };
  }
  if (parts[0] === 'needs') return { name: 'needs' };
  if (parts[0] === 'settings') return parts[1] ? { name: 'settings', section: parts[1] } : { name: 'settings' };
  return { name: 'board' };
}

export function routeHash(r: Route): string {
  switch (r.name) {
    case 'task':
      return `#/task/${encodeURIComponent(r.id)}` + (r.run ? `/run/${encodeURIComponent(r.run)}` : '');
    case 'needs':
      return '#/needs';
    case 'settings':
      return r.section ? `#/settings/${encodeURIComponent(r.section)}` : '#/settings';
    default:
      return '#/';
  }
}
