/* Classifies texts with any semroute model through the C API:
 *   classify MODEL_DIR TEXT...
 * A sequence classifier prints each text's label and probabilities, a token
 * classifier its entity spans, an embedding model the similarity of every
 * text to the first. */
#include <semroute/semroute.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints and frees a failed status; returns nonzero if there was one. */
static int failed(semroute_status* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "%s: %s: %s\n", what, semroute_code_name(semroute_status_code(status)),
          semroute_status_message(status));
  semroute_status_free(status);
  return 1;
}

static int classify(const semroute_model* model, char** texts, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    semroute_classifications* result = NULL;
    if (failed(semroute_classify(model, texts[i], strlen(texts[i]), &result), "classify")) return 1;
    printf("%-10s %.4f  %s\n", semroute_classifications_label(result, 0),
           (double)semroute_classifications_confidence(result, 0), texts[i]);
    size_t count = 0;
    const float* probabilities = semroute_classifications_probabilities(result, 0, &count);
    for (size_t k = 0; k < count; ++k)
      printf("    %-10s %.4f\n", semroute_model_label(model, k), (double)probabilities[k]);
    semroute_classifications_free(result);
  }
  return 0;
}

static int extract_entities(const semroute_model* model, char** texts, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    semroute_token_results* result = NULL;
    if (failed(semroute_token_classify(model, texts[i], strlen(texts[i]), &result), "token classify")) return 1;
    size_t count = 0;
    const semroute_entity* const* entities = semroute_token_results_entities(result, 0, &count);
    printf("%s\n", texts[i]);
    for (size_t k = 0; k < count; ++k)
      printf("  %-8s [%llu, %llu) %.4f  %s\n", entities[k]->type, (unsigned long long)entities[k]->begin,
             (unsigned long long)entities[k]->end, (double)entities[k]->score, entities[k]->text);
    semroute_token_results_free(result);
  }
  return 0;
}

static int compare_embeddings(const semroute_model* model, char** texts, size_t n) {
  printf("%zu-dimensional embeddings\n", semroute_model_embedding_dim(model));
  for (size_t i = 0; i < n; ++i) {
    float similarity = 0;
    if (failed(semroute_similarity(model, texts[0], strlen(texts[0]), texts[i], strlen(texts[i]), &similarity),
               "similarity"))
      return 1;
    printf("%.4f  %s\n", (double)similarity, texts[i]);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL_DIR TEXT...\n", argv[0]);
    return 2;
  }
  semroute_model* model = NULL;
  if (failed(semroute_model_load(argv[1], NULL, &model), "load")) return 1;
  printf("semroute %s, %s model (%s)\n", semroute_version(), semroute_model_type(model),
         semroute_model_architecture(model));
  char** texts = argv + 2;
  const size_t n = (size_t)(argc - 2);
  int rc = 0;
  switch (semroute_model_task(model)) {
    case SEMROUTE_TASK_SEQUENCE_CLASSIFICATION: rc = classify(model, texts, n); break;
    case SEMROUTE_TASK_TOKEN_CLASSIFICATION: rc = extract_entities(model, texts, n); break;
    default: rc = compare_embeddings(model, texts, n); break;
  }
  semroute_model_free(model);
  return rc;
}
