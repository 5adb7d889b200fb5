/** setTimeout's largest delay, in ms; Node fires longer ones at once. */
export const MAX_TIMER_MS = 2_147_483_647;
