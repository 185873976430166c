import { defineConfig } from 'vite';

/**
 * The dashboard's build (docs/ui.md): plain TypeScript modules bundled into hashed files under
 * `assets/`, served by the service at `/ui/`. `npm run build` (scripts/build.ts) writes it to `dist/ui`.
 * `vite ui` serves it for development, passing the API's routes to a service on port 3000.
 */
const API = 'http://127.0.0.1:3000';

export default defineConfig({
  root: import.meta.dirname,
  base: '/ui/',
  build: {
    outDir: '../dist/ui',
    emptyOutDir: true,
    // No inline script or style anywhere: the page's CSP allows only files of its own origin.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    reportCompressedSize: false,
  },
  resolve: {
    // The spreadsheet converter (src/spreadsheets/) is the command-line client's; in the page its CSV
    // parser is csv-parse's browser build (the same parser, without Node's streams).
    alias: [{ find: /^csv-parse$/, replacement: 'csv-parse/browser/esm' }],
  },
  // The XLSX reader runs in a module worker of its own file (ui/src/import/xlsx-worker.ts).
  worker: { format: 'es' },
  server: {
    proxy: Object.fromEntries(
      ['/products', '/analysis', '/webhook-endpoints'].map((prefix) => [prefix, API]),
    ),
  },
});
