/// <reference types="vitest/config" />
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig, type ProxyOptions } from 'vite';

// The runtime serves the built files from frontend/dist (embedded with go:embed).
// In development, `npm run dev` proxies the API to a running `ensemble serve`.
const runtime = 'http://127.0.0.1:4000';

// The runtime checks Host and Origin, so the proxy presents requests as the runtime's own.
// To sign in while developing, open the printed sign-in link with this server's host and port.
const toRuntime: ProxyOptions = { target: runtime, changeOrigin: true, headers: { origin: runtime } };

export default defineConfig({
  plugins: [svelte()],
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    reportCompressedSize: true,
  },
  server: {
    proxy: { '/api': toRuntime, '/auth': toRuntime, '/s/': toRuntime },
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
