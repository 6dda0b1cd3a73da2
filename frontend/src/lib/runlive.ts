// Words for a run's live picture (components/RunLive.svelte).

const PAUSED: Record<string, string> = {
  sensitive: 'Paused: the page waits for your sign-in or a human check, so nothing pictures it.',
  controlled: 'Paused while you control the tab.',
  secret_on_screen: 'Paused: the page shows a saved secret or a key, so it is not pictured.',
};

/** Why a live picture is paused, in words. */
export function pausedWords(paused: string): string {
  return PAUSED[paused] ?? 'Paused.';
}

/** The site of an address (example.com, or localhost:5173), or '' for none. */
export function siteOf(url: string): string {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.host.replace(/^www\./, '') : '';
  } catch {
    return '';
  }
}
