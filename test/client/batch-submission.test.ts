import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { submitInParts, type PartOutcome } from '../../src/import-pipeline/batch-submission.ts';
import { cliSubmitter } from '../../src/client/cli-submitter.ts';
import { createIngestionClient } from '../../src/client/ingestion-client.ts';
import { accepted, fakeService, problem } from '../helpers/fake-ingestion-service.ts';

void describe('submitting a batch in parts', () => {
  void test('the texts are dropped once sent, so a batch being followed holds only its positions', async () => {
    let posts = 0;
    const service = await fakeService(() =>
      ++posts === 1 ? problem(413, 'Too large.') : accepted(`b-${posts}`, 1),
    );
    const client = createIngestionClient({ baseUrl: service.url, token: 'tok', backoffMs: [1] });
    const batch = { positions: [4, 5, 6], texts: ['{"n":4}', '{"n":5}', '{"n":6}'] };

    const seen: Array<[PartOutcome, string[]]> = [];
    for await (const part of submitInParts(cliSubmitter(client), batch, new AbortController().signal)) {
      seen.push([part, [...batch.texts]]);
    }
    await service.close();

    assert.deepEqual(seen, [
      [{ kind: 'accepted', positions: [4, 5], batchId: 'b-2', replayed: false }, []],
      [{ kind: 'accepted', positions: [6], batchId: 'b-3', replayed: false }, []],
    ]);
    assert.deepEqual(batch, { positions: [4, 5, 6], texts: [] });
  });
});
