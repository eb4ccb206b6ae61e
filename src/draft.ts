/** A record under construction: its fields are set one by one (no spreads: see memory-records.ts) before it is handed out as readonly. */
export type Draft<T> = { -readonly [K in keyof T]: T[K] };
