/** @ampcors/fastify: work in progress (issue 17). */
export {};
