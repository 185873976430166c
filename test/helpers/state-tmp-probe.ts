import { setImmediate as yieldLoop } from 'node:timers/promises';
import { startTestService } from './test-service.ts';
import { product } from './catalog-fixtures.ts';
const svc = await startTestService({ WORKER_CHUNK_SIZE: '50' });
const db = svc.service.db as any;
const t = db.transaction;
db.transaction = async (fn: any) => {
  try {
    return await t(fn);
  } finally {
    await yieldLoop();
  }
};
const q = db.query;
db.query = async (...a: any[]) => {
  try {
    return await q(...a);
  } finally {
    await yieldLoop();
  }
};
const token = await svc.token(svc.tenant());
let lastTick = Date.now();
let maxGap = 0;
const iv = setInterval(() => {
  const n = Date.now();
  maxGap = Math.max(maxGap, n - lastTick);
  lastTick = n;
}, 5);
const id = await svc.submit(
  token,
  Array.from({ length: 1000 }, () => product()),
);
lastTick = Date.now();
maxGap = 0;
let n = 0,
  partial = 0;
for (;;) {
  const r = (await svc.request({ method: 'GET', url: `/products/ingestions/${id}`, token })).json() as any;
  n++;
  if (r.status === 'processing' && r.upserted > 0 && r.upserted < 1000) partial++;
  if (r.status === 'completed') break;
}
console.log('observations', n, 'partial', partial, 'max event-loop gap ms', maxGap);
clearInterval(iv);
await svc.stop();
