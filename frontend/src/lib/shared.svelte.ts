// State the page shares across components, instead of counters handed down as props: what waits
// on Needs me, and the signals the live stream raises for a part of the page to read its list again.

import { openCount, type NeedItem } from './needs';

class Needs {
  /** The decisions on Needs me, as App keeps them from the list and the stream. */
  items = $state.raw<NeedItem[]>([]);
  /** How many wait for an answer: the nav's badge and the window's title. */
  readonly open = $derived(openCount(this.items));
}

class Signals {
  /** Bumped when a run of the open task changed: the task page reads its runs again. */
  runs = $state(0);
  /** Bumped when a run starts, moves on or ends, or a session is deleted: Sessions reads its list again. */
  sessions = $state(0);
  /** Bumped on profile.changed: Settings → Run profiles and the Assign dialog read the profiles again. */
  profiles = $state(0);
  /** Bumped when the terminal panel closes: a sign-in may have happened there (Settings → Agents). */
  terminalClosed = $state(0);
  /** Bumped, with its id, when the runtime says a conversation changed (assistant.conversation). */
  conversation = $state<{ id: string; n: number } | null>(null);
}

export const needs = new Needs();
export const signals = new Signals();
