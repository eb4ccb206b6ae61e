/**
 * CSRF protection for the dashboard's forms, without server-side sessions: a random
 * cookie per browser (HttpOnly, SameSite=Strict) and, in each form, its HMAC under
 * the dashboard's secret. A POST must carry both, and they must match: another site
 * can make a browser send the cookie but cannot read it to compute the token.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const CSRF_COOKIE = 'tickwork_csrf';
export const CSRF_FIELD = '_csrf';

export class Csrf {
  readonly #secret: string;

  /** Without a secret, one is drawn per dashboard: tokens then hold until the process restarts. */
  constructor(secret: string | undefined) {
    this.#secret = secret ?? randomBytes(32).toString('base64url');
  }

  /** The form token for this request's browser, setting its cookie first when it has none. */
  tokenFor(req: IncomingMessage, res: ServerResponse, cookiePath: string): string {
    let id = readCookie(req, CSRF_COOKIE);
    if (id === undefined || !/^[\w-]{43}$/.test(id)) {
      id = randomBytes(32).toString('base64url');
      const secure = isSecure(req) ? '; Secure' : '';
      res.appendHeader('Set-Cookie', `${CSRF_COOKIE}=${id}; Path=${cookiePath}; HttpOnly; SameSite=Strict${secure}`);
    }
    return this.#sign(id);
  }

  /** True when the request carries the cookie and the token made from it. */
  verify(req: IncomingMessage, token: string | undefined): boolean {
    const id = readCookie(req, CSRF_COOKIE);
    if (id === undefined || token === undefined) return false;
    const expected = Buffer.from(this.#sign(id));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  #sign(id: string): string {
    return createHmac('sha256', this.#secret).update(id).digest('base64url');
  }
}

function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

function isSecure(req: IncomingMessage): boolean {
  return (req.socket as { encrypted?: boolean }).encrypted === true || req.headers['x-forwarded-proto'] === 'https';
}
