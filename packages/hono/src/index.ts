/** @ampcors/hono: work in progress (issue 17). */
export {};
