/** `tickwork/memory`: storage and locks in one process. */
export { MemoryStore } from './memory-store.js';
export { MemoryLock } from './memory-lock.js';
