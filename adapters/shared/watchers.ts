/**
 * Handing a notification to a networked store's watchers (Redis pub/sub, Postgres
 * LISTEN): each one called, none able to stop the others.
 */
import type { StoreNotification } from '../../src/store.js';

export type Watcher = (notification: StoreNotification) => void;

/** Calls every watcher with `notification`; a watcher's failure is the watcher's business (the store's state is already consistent). */
export function notifyWatchers(watchers: Iterable<Watcher>, notification: StoreNotification): void {
  for (const watcher of watchers) {
    try {
      watcher(notification);
    } catch {
      // Nothing to undo: the notification only told of a write already made.
    }
  }
}
