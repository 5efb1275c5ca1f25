/* Runs a graph file through an installed libkiln.so: session (default config), compile, a run
 * on a DLPack input of ones with an output the runtime allocates. Prints the output's sum. */
#include <kiln/runtime.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(kiln_runtime_error* e) {
  fprintf(stderr, "consumer: %s\n", kiln_runtime_error_message(e));
  kiln_runtime_error_destroy(e);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  kiln_session* session = NULL;
  kiln_runtime_error* e = kiln_session_open(NULL, &session);
  if (e) return fail(e);
  kiln_graph_source source = {sizeof(source), NULL, 0, argv[1], NULL, 0, NULL};
  kiln_graph* graph = NULL;
  if ((e = kiln_graph_compile(session, &source, &graph))) return fail(e);
  kiln_tensor_info info = {sizeof(info)};
  if ((e = kiln_graph_tensor_info(graph, 0, 0, &info))) return fail(e);
  int64_t count = 1;
  for (int32_t d = 0; d < info.ndim; ++d) count *= info.shape[d];
  float* ones = malloc(sizeof(float) * (size_t)count);
  for (int64_t i = 0; i < count; ++i) ones[i] = 1.0f;
  DLTensor input = {ones, {kDLCPU, 0}, info.ndim, info.dtype, (int64_t*)info.shape, NULL, 0};
  const DLTensor* inputs[] = {&input};
  kiln_dl_managed_tensor* output = NULL;
  if ((e = kiln_graph_run_alloc(graph, inputs, 1, &output, 1))) return fail(e);
  double sum = 0;
  int64_t n = 1;
  for (int32_t d = 0; d < output->dl_tensor.ndim; ++d) n *= output->dl_tensor.shape[d];
  for (int64_t i = 0; i < n; ++i) sum += ((const float*)output->dl_tensor.data)[i];
  printf("consumer: %s on %s, output sum %.4f\n", argv[1], kiln_graph_target(graph), sum);
  output->deleter(output);
  free(ones);
  kiln_graph_destroy(graph);
  kiln_session_close(session);
  return 0;
}
