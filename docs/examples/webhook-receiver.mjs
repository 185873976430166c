// A webhook receiver for this service's completion webhooks, with node:crypto only (no packages).
// Run: WEBHOOK_SECRET=whsec_... PORT=8080 node docs/examples/webhook-receiver.mjs
// It verifies each delivery's signature (Standard Webhooks), refuses stale or forged ones with 400,
// skips a delivery it has already handled (the same webhook-id can arrive twice: delivery is
// at-least-once), and prints each event as one JSON line.
/* global console */
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import process from 'node:process';

const secret = process.env.WEBHOOK_SECRET ?? '';
if (!secret.startsWith('whsec_')) {
  console.error('Set WEBHOOK_SECRET to the endpoint secret (whsec_...)');
  process.exit(1);
}
// Until a rotation's 24 h are over, deliveries carry two signatures; either secret verifies one.
const keys = [secret, process.env.WEBHOOK_PREVIOUS_SECRET]
  .filter(Boolean)
  .map((s) => Buffer.from(s.slice('whsec_'.length), 'base64'));
const TOLERANCE_SECONDS = 5 * 60;
const seen = new Set(); // a real receiver keeps handled ids in its database

/** Whether one of the `v1,` signatures in the header is ours for this id, timestamp and body. */
function verify(headers, body) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = String(headers['webhook-signature'] ?? '').split(' ');
  if (!id || !/^\d+$/.test(timestamp ?? '')) return false;
  // An old timestamp may be a replayed request.
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  return keys.some((key) => {
    const expected = Buffer.from(
      createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64'),
    );
    return signatures.some((signature) => {
      const given = Buffer.from(signature.replace(/^v1,/, ''));
      return (
        signature.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected)
      );
    });
  });
}

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    // Verify the exact bytes received, before any parsing.
    const body = Buffer.concat(chunks).toString('utf8');
    if (request.method !== 'POST' || !verify(request.headers, body)) {
      response.writeHead(400).end('invalid signature');
      return;
    }
    const id = request.headers['webhook-id'];
    if (!seen.has(id)) {
      seen.add(id);
      const event = JSON.parse(body);
      console.log(
        JSON.stringify({ id, type: event.type, batch_id: event.data.batch_id, status: event.data.status }),
      );
    }
    // Answer fast (2xx within 15 s); do slow work after answering.
    response.writeHead(204).end();
  });
});

server.listen(Number(process.env.PORT ?? 8080), '127.0.0.1', () => {
  console.error(`listening on ${server.address().port}`);
});
