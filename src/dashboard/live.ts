/**
 * Live updates: one `store.watch()` subscription per dashboard (none when the store
 * has no notifications), open while at least one browser listens, fanned out to every browser as server-sent events. Store
 * notifications arriving within `COALESCE_MS` go out as one `change` event naming
 * the jobs and runs that changed, so a burst of runs costs each page one refresh.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock, TimerHandle } from '../clock.js';
import type { Store, StoreNotification } from '../store.js';

const COALESCE_MS = 50;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;
/** More names than this in one event: the page refreshes whatever it shows. */
const MAX_NAMES = 200;

export class LiveHub {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #clients = new Set<ServerResponse>();
  #unwatch: (() => void) | undefined;
  #jobs = new Set<string>();
  #runs = new Set<string>();
  #flushTimer: TimerHandle | undefined;
  #keepAliveTimer: TimerHandle | undefined;

  constructor(store: Store, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  get clients(): number {
    return this.#clients.size;
  }

  /** Turns the response into an event stream until the browser goes away. */
  attach(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    // `retry`: a dropped stream is reopened after a second; `ready` tells the page it is live.
    res.write('retry: 1000\nevent: ready\ndata: {}\n\n');
    this.#clients.add(res);
    const detach = (): void => {
      if (!this.#clients.delete(res)) return;
      if (this.#clients.size === 0) this.#stop();
    };
    req.on('close', detach);
    res.on('close', detach);
    res.on('error', detach);
    if (this.#keepAliveTimer === undefined) {
      // A store without notifications (optional): the stream stays open, with no change events.
      this.#unwatch = this.#store.watch?.((notification) => this.#note(notification));
      this.#keepAlive();
    }
  }

  close(): void {
    for (const res of this.#clients) res.end();
    this.#clients.clear();
    this.#stop();
  }

  #note(notification: StoreNotification): void {
    this.#jobs.add(notification.jobName);
    if (notification.type !== 'job-changed') this.#runs.add(notification.runId);
    this.#flushTimer ??= this.#clock.setTimer(() => this.#flush(), COALESCE_MS);
  }

  #flush(): void {
    this.#flushTimer = undefined;
    const all = this.#jobs.size > MAX_NAMES || this.#runs.size > MAX_NAMES;
    const payload = all ? { all: true } : { jobs: [...this.#jobs], runs: [...this.#runs] };
    this.#jobs = new Set();
    this.#runs = new Set();
    this.#send(`event: change\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  #keepAlive(): void {
    this.#keepAliveTimer = this.#clock.setTimer(() => {
      this.#send(': keep-alive\n\n');
      this.#keepAlive();
    }, KEEPALIVE_MS);
  }

  #send(chunk: string): void {
    for (const res of this.#clients) {
      try {
        res.write(chunk);
      } catch {
        this.#clients.delete(res); // a broken socket; its close event follows
      }
    }
  }

  #stop(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
    if (this.#flushTimer !== undefined) this.#clock.clearTimer(this.#flushTimer);
    if (this.#keepAliveTimer !== undefined) this.#clock.clearTimer(this.#keepAliveTimer);
    this.#flushTimer = undefined;
    this.#keepAliveTimer = undefined;
    this.#jobs = new Set();
    this.#runs = new Set();
  }
}
