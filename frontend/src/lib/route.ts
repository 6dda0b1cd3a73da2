// The hash routes: the board (""), a task's page (#/task/<id>, optionally /run/<job id>), the
// screens of the left navigation (#/projects, #/pages, #/people, #/repos, #/sessions, each with an
// optional record: #/projects/<id>, or #/projects/new for a new one), Nodes (#/nodes, or a room:
// #/nodes/<room id>), Needs me (#/needs) and
// Settings (#/settings, or one of its sections: #/settings/assistant).

/** The record screens, by their name in the address. */
export const RECORD_SCREENS = ['projects', 'pages', 'people', 'repos'] as const;
export type RecordScreen = (typeof RECORD_SCREENS)[number];

export type Route =
  | { name: 'board' }
  | { name: 'task'; id: string; run?: string }
  | { name: RecordScreen; id?: string }
  | { name: 'sessions'; id?: string }
  | { name: 'nodes'; id?: string }
  | { name: 'needs' }
  | { name: 'settings'; section?: string };

/** The navigation item a route belongs to: a task's page is the board's. */
export type Screen = 'board' | RecordScreen | 'sessions' | 'nodes' | 'needs' | 'settings';

export function screenOf(r: Route): Screen {
  return r.name === 'task' ? 'board' : r.name;
}

function isRecordScreen(s: string): s is RecordScreen {
  return (RECORD_SCREENS as readonly string[]).includes(s);
}

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  const parts = h.split('/').map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  const [head, id] = parts;
  if (head === 'task' && id) {
    return parts[2] === 'run' && parts[3] ? { name: 'task', id, run: parts[3] } : { name: 'task', id };
  }
  if (isRecordScreen(head) || head === 'sessions' || head === 'nodes') return id ? { name: head, id } : { name: head };
  if (head === 'needs') return { name: 'needs' };
  if (head === 'settings') return id ? { name: 'settings', section: id } : { name: 'settings' };
  return { name: 'board' };
}

export function routeHash(r: Route): string {
  const enc = encodeURIComponent;
  switch (r.name) {
    case 'task':
      return `#/task/${enc(r.id)}` + (r.run ? `/run/${enc(r.run)}` : '');
    case 'needs':
      return '#/needs';
    case 'settings':
      return r.section ? `#/settings/${enc(r.section)}` : '#/settings';
    case 'board':
      return '#/';
    default:
      return r.id ? `#/${r.name}/${enc(r.id)}` : `#/${r.name}`;
  }
}
