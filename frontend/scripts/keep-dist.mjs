// Vite empties dist/ on every build; Go's `//go:embed all:dist` needs the folder to exist
// on a fresh clone, so the build puts back the (committed) empty dist/.keep.
import { mkdirSync, writeFileSync } from 'node:fs';

const dir = new URL('../dist/', import.meta.url);
mkdirSync(dir, { recursive: true });
writeFileSync(new URL('.keep', dir), '');
