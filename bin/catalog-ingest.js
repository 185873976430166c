#!/usr/bin/env node
// `npx catalog-ingest FILE …`: the command-line client of docs/cli.md, as `npm run ingest -- FILE …`
// runs it but without npm's echo of the command line, in one process. Its TypeScript sources are
// loaded through tsx, as `node --import tsx` does for the package scripts.
import 'tsx';

await import('../src/cli/ingest-file.ts');
