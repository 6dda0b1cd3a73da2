// Toasts: short sentences shown in the #toast region, dismissed after a while.

export interface Toast {
  id: number;
  text: string;
  kind: 'info' | 'error';
  action?: { label: string; run: () => void };
}

let next = 1;
export const toasts = $state<Toast[]>([]);

export function dismiss(id: number): void {
  const i = toasts.findIndex((t) => t.id === id);
  if (i >= 0) toasts.splice(i, 1);
}

export function toast(text: string, kind: Toast['kind'] = 'info', action?: Toast['action']): number {
  const id = next++;
  toasts.push({ id, text, kind, action });
  while (toasts.length > 4) toasts.shift();
  setTimeout(() => dismiss(id), kind === 'error' ? 7000 : action ? 6000 : 4000);
  return id;
}

export function toastError(err: unknown): void {
  toast(err instanceof Error ? err.message : String(err), 'error');
}
