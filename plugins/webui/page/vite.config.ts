/**
 * Builds the web page into dist/plugins/webui/page/ (index.html at its top, hashed files under
 * assets/), where the webui plugin's static-page module serves it. Preact's JSX goes through
 * esbuild's automatic runtime, so no Vite plugin is needed; uPlot is split into its own chunk and
 * loaded only when a chart opens.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: '/',
  publicDir: false,
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: here('../../../dist/plugins/webui/page'),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2020',
    // The page is served from a Pi over the LAN: no source maps to download, and a small budget.
    sourcemap: false,
    chunkSizeWarningLimit: 120,
    modulePreload: { polyfill: false },
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
