import type { FastifyInstance } from 'fastify';

/**
 * The site icon browsers ask for at `/favicon.ico` (a sofa, 32×32: one PNG in an ICO container),
 * kept in the code rather than a file so the service serves it however it was built or deployed.
 */
export const FAVICON = Buffer.from(
  'AAABAAEAICAAAAEAIACIAQAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgDAAAARKSKxgAAAFpQTFRFTGlxHm9qHm5qJG1tInNoHm9qH29rHm5rHnBqH29rHm5rH25qH25rHm9sH29pH29rH25qHm5rH25qGXJmHm9qH29r////5u/v5u/uX5iV5/Dv/P39XpiVYZmXnlE/2wAAABV0Uk5TAPGEFRbO8/JU/vD0g1VSgoHPzRTQ+jMAXgAAAAlwSFlzAAALEwAACxMBAJqcGAAAALNJREFUOMu9k+sSgiAQRj+vYJq3WvBS7/+akU0IEy7TTNP5h3tcVuEDgDwdavqgLpocG2dBBwi51Ss6pDJGLoghyZASS4crLxQoeUGAInwh3Bdl0XNA0MphCgjK4+eCGVD7wvIeFHbA1a2vdlDs7Z0e074NAvt7c/xN0KG6+xWzVtPNPcP9Aex/9E/ZruOC4IUEQ+zSNrzQR4JzugCSi177DKdMDt9vX/HOujEQn3LsTX88AJNxUQTqCI7UAAAAAElFTkSuQmCC',
  'base64',
);

/** Serves `GET /favicon.ico`, cached for a day; its requests are routine, logged at `debug`. */
export async function faviconRoute(app: FastifyInstance): Promise<void> {
  app.get(
    '/favicon.ico',
    { config: { routineRequests: true }, schema: { hide: true } },
    async (_request, reply) =>
      reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(FAVICON),
  );
}
