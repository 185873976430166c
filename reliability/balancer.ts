import net from 'node:net';

/** A loopback TCP load balancer in front of API processes. */
export interface Balancer {
  port: number;
  /** Connections that found no backend accepting (every backend refused). */
  refused(): number;
  close(): Promise<void>;
}

/**
 * Starts a round-robin, pass-through TCP balancer on a free loopback port. Each client connection
 * is piped to one backend for its whole life. A backend that refuses the connection (a process
 * restarting) is skipped for the next, as a real load balancer retries a failed connect; once
 * connected, nothing is retried: a connection the backend ends or resets ends the same way for
 * the client, so a server that drops a request shows as the client's failure.
 */
export async function startBalancer(backendPorts: readonly number[]): Promise<Balancer> {
  let turn = 0;
  let refused = 0;
  const sockets = new Set<net.Socket>();
  const connectAny = (attempt: number, onConnected: (backend: net.Socket) => void, onFailed: () => void) => {
    const port = backendPorts[turn++ % backendPorts.length]!;
    const backend = net.connect({ port, host: '127.0.0.1' });
    backend.once('connect', () => {
      backend.removeAllListeners('error');
      onConnected(backend);
    });
    backend.once('error', () => {
      backend.destroy();
      if (attempt + 1 < backendPorts.length * 3)
        setTimeout(() => connectAny(attempt + 1, onConnected, onFailed), 20);
      else onFailed();
    });
  };
  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    connectAny(
      0,
      (backend) => {
        sockets.add(backend);
        backend.once('close', () => sockets.delete(backend));
        // Pass-through both ways, half-closes included; a reset on one side resets the other.
        client.pipe(backend);
        backend.pipe(client);
        client.on('error', () => backend.resetAndDestroy());
        backend.on('error', () => client.resetAndDestroy());
        client.resume();
      },
      () => {
        refused++;
        client.resetAndDestroy();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    refused: () => refused,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
