import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { request } from 'undici';

/**
 * `npm run bench -- --webhook`: a loopback receiver for completion webhooks, and one endpoint per
 * bench tenant registered to it, so the ingestion figures can be compared with and without webhooks
 * (the outbox insert at each batch's end, and the deliveries sent beside the batches).
 */
export interface BenchWebhooks {
  url: string;
  /** Registers one endpoint (all events) for `tenantId` on the service at `baseUrl`. */
  register(baseUrl: string, secret: string, tenantId: string): Promise<void>;
  /** Deliveries received so far, and how many endpoints were registered. */
  figures(): { endpoints: number; deliveries: number };
  close(): Promise<void>;
}

/** Starts the receiver on 127.0.0.1; it answers every delivery 204 at once. */
export async function startBenchWebhooks(): Promise<BenchWebhooks> {
  let deliveries = 0;
  let endpoints = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      deliveries++;
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return {
    url,
    async register(baseUrl, secret, tenantId) {
      const token = await new SignJWT({ tenant_id: tenantId, scope: 'webhooks:manage' })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(secret));
      const res = await request(`${baseUrl}/webhook-endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url, description: 'bench receiver' }),
      });
      const text = await res.body.text();
      if (res.statusCode !== 201) throw new Error(`webhook registration answered ${res.statusCode}: ${text}`);
      endpoints++;
    },
    figures: () => ({ endpoints, deliveries }),
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
