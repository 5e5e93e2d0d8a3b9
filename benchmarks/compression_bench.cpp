// Prompt compression, measured in one run:
//  1. Throughput: MB/s per core of the funnel on a ~200K-token prompt (this
//     repository's README repeated: prose, tables, code), with the domain
//     model's tokenizer counting the budget and with the word count, against
//     the tokenizer reading the whole prompt once.
//  2. What it does to a decision: long prompts of our own (sentences of one
//     subject among neutral filler), classified by the default domain model
//     (128 tokens at most) on the skeleton and on the first 128 tokens
//     (truncation), each against the decision on the whole text (the mean of
//     the model's probabilities over 128-token windows covering all of it).
//
//   semroute_compression_bench [--budget 126] [--speed-only]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compression/prompt_compressor.h"
#include "core/cpu_features.h"
#include "tasks/sequence_classifier.h"
#include "tokenizers/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;
const std::filesystem::path kRepo = SEMROUTE_SOURCE_DIR;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Best of `runs` timings of fn, in seconds.
template <class Fn>
double best_of(int runs, const Fn& fn) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    fn();
    best = std::min(best, seconds_since(start));
  }
  return best;
}

void throughput(const std::shared_ptr<const semroute::Tokenizer>& tokenizer) {
  const std::string readme = read_file(kRepo / "README.md");
  std::string text;
  while (tokenizer->encode(text, semroute::EncodeOptions{false, 0, semroute::Keep::kStart}).size() < 200000)
    text += readme;
  const size_t tokens = tokenizer->encode(text, semroute::EncodeOptions{false, 0, semroute::Keep::kStart}).size();
  const double mb = static_cast<double>(text.size()) / 1e6;
  std::printf("prompt: %.2f MB, %zu tokens (README.md repeated)\n", mb, tokens);
  const double tokenize = best_of(3, [&] { tokenizer->encode(text, semroute::EncodeOptions{false, 0, semroute::Keep::kStart}); });
  std::printf("  tokenizing it whole: %.1f ms (%.1f MB/s)\n", tokenize * 1e3, mb / tokenize);
  for (const size_t budget : {size_t{128}, size_t{512}, size_t{2048}}) {
    for (const bool with_tokenizer : {true, false}) {
      semroute::CompressOptions options;
      options.max_tokens = budget;
      const semroute::PromptCompressor compressor(options, with_tokenizer ? tokenizer : nullptr);
      semroute::CompressedText c;
      const double t = best_of(5, [&] { c = compressor.compress(text); });
      std::printf("  budget %4zu, %-10s: %6.1f ms, %6.1f MB/s per core (%.2fx the tokenizer's whole read); "
                  "%zu of %zu units, %zu tokens\n",
                  budget, with_tokenizer ? "tokenizer" : "word count", t * 1e3, mb / t, tokenize / t, c.units_kept,
                  c.units, c.tokens);
    }
  }
}

// Our own sentences: a few subjects and neutral filler.
struct Subject {
  std::string label;
  std::vector<std::string> sentences;
};

const std::vector<Subject>& subjects() {
  static const std::vector<Subject> all = {
      {"math",
       {"Let f be a continuous function on the closed interval from zero to one.",
        "Prove that the sum of the first n odd numbers equals n squared.",
        "The determinant of the matrix changes sign when two rows are swapped.",
        "Find the derivative of x cubed minus four x plus seven.",
        "An integer greater than one is prime when its only divisors are one and itself.",
        "Complete the square to find the roots of this quadratic.",
        "The integral of the sine function over a full period is zero.",
        "Compute the probability that two dice show the same number."}},
      {"law",
       {"The tenant claims the landlord breached the lease by failing to repair the roof.",
        "A contract requires an offer, an acceptance and consideration.",
        "The defendant moved to dismiss the case for lack of jurisdiction.",
        "Under the statute, the employer is liable for the negligence of its employees.",
        "The court held that the search violated the Fourth Amendment.",
        "The plaintiff seeks damages for the breach of a written agreement.",
        "A will must be signed in the presence of two witnesses to be valid.",
        "The appeal argues that the jury instructions misstated the law."}},
      {"biology",
       {"Mitochondria produce most of the cell's supply of ATP.",
        "During mitosis the chromosomes line up at the center of the cell.",
        "Enzymes lower the activation energy of biochemical reactions.",
        "Natural selection favors traits that increase reproductive success.",
        "Photosynthesis converts light energy into chemical energy in chloroplasts.",
        "DNA is transcribed into messenger RNA in the nucleus.",
        "The population of the species declined after its habitat was fragmented.",
        "Ribosomes translate messenger RNA into a chain of amino acids."}},
      {"economics",
       {"When the central bank raises interest rates, borrowing becomes more expensive.",
        "Inflation erodes the purchasing power of fixed incomes.",
        "A price ceiling below the equilibrium price creates a shortage.",
        "The elasticity of demand measures how quantity responds to price.",
        "Gross domestic product fell for two consecutive quarters.",
        "Comparative advantage explains why countries gain from trade.",
        "Unemployment rose as firms cut investment during the recession.",
        "Fiscal stimulus increases aggregate demand in the short run."}},
      {"chemistry",
       {"The pH of a solution measures the concentration of hydrogen ions.",
        "Balance the equation for the combustion of methane.",
        "A catalyst speeds up the reaction without being consumed.",
        "Sodium chloride dissolves in water because water molecules are polar.",
        "The molar mass of carbon dioxide is about forty-four grams per mole.",
        "Oxidation is the loss of electrons and reduction is their gain.",
        "Noble gases rarely form compounds because their outer shells are full.",
        "Titrate the acid with sodium hydroxide until the indicator turns pink."}},
      {"health",
       {"The patient reports chest pain and shortness of breath after exercise.",
        "Iron deficiency anemia causes fatigue and pale skin.",
        "Regular exercise lowers blood pressure in most adults.",
        "The vaccine reduces the risk of severe illness.",
        "A balanced diet includes fruit, vegetables and whole grains.",
        "Symptoms of dehydration include headache and dizziness.",
        "The doctor prescribed antibiotics for the bacterial infection.",
        "Sleep deprivation weakens the immune system."}},
  };
  return all;
}

const std::vector<std::string> kFiller = {
    "Thank you for taking the time to read this message.",
    "Please let me know if anything is unclear.",
    "I have attached the notes from our last meeting below.",
    "As mentioned before, the schedule may change.",
    "We will get back to you as soon as possible.",
    "The following text was copied from several documents.",
    "Some parts may repeat what was said earlier.",
    "Kind regards, and have a good week.",
};

// A prompt of about `target_words` words: the subject's sentences among filler.
std::string long_prompt(const Subject& subject, size_t target_words, std::mt19937& rng) {
  std::string text;
  size_t words = 0;
  while (words < target_words) {
    const bool on_subject = rng() % 4 == 0;
    const auto& pool = on_subject ? subject.sentences : kFiller;
    const std::string& s = pool[rng() % pool.size()];
    text += s + (rng() % 5 == 0 ? "\n" : " ");
    words += static_cast<size_t>(std::count(s.begin(), s.end(), ' ') + 1);
  }
  return text;
}

// The model's decision on the whole text: mean probabilities over windows.
size_t whole_text_label(const semroute::SequenceClassifier& model, const semroute::Tokenizer& tokenizer,
                        const std::string& text, size_t window) {
  const auto enc = tokenizer.encode(text, semroute::EncodeOptions{false, 0, semroute::Keep::kStart});
  std::vector<std::string_view> windows;
  for (size_t i = 0; i < enc.size(); i += window) {
    const size_t last = std::min(enc.size(), i + window) - 1;
    windows.push_back(std::string_view(text).substr(enc.offsets[i].begin, enc.offsets[last].end - enc.offsets[i].begin));
  }
  std::vector<double> mean(model.labels().size(), 0);
  for (size_t i = 0; i < windows.size(); i += 16) {
    const std::vector<std::string_view> batch(windows.begin() + i, windows.begin() + std::min(windows.size(), i + 16));
    for (const auto& c : model.classify(batch))
      for (size_t l = 0; l < mean.size(); ++l) mean[l] += c.probabilities[l];
  }
  return static_cast<size_t>(std::max_element(mean.begin(), mean.end()) - mean.begin());
}

bool skip_decisions = false;

void decision_agreement(size_t budget) {
  const auto model = semroute::SequenceClassifier::load(kRepo / "models/domain");
  const auto& tokenizer = *model->task().tokenizer;
  semroute::CompressOptions options;
  options.max_tokens = budget;
  const semroute::PromptCompressor compressor(options, model->task().tokenizer);
  std::mt19937 rng(2026);
  std::printf("\ndomain decisions on long prompts (default domain model, %zu-token skeletons):\n", budget);
  std::printf("| words | prompts | skeleton = whole | first %zu tokens = whole | right subject: skeleton | first %zu "
              "tokens | whole text |\n",
              budget, budget);
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const size_t words : {size_t{2000}, size_t{8000}, size_t{32000}}) {
    if (skip_decisions) break;
    size_t n = 0, skeleton_agrees = 0, truncation_agrees = 0, whole_right = 0, skeleton_right = 0, truncation_right = 0;
    for (const auto& subject : subjects()) {
      for (int repeat = 0; repeat < 5; ++repeat) {
        const std::string text = long_prompt(subject, words, rng);
        const size_t whole = whole_text_label(*model, tokenizer, text, 126);
        const auto skeleton = compressor.compress(text);
        const std::vector<std::string_view> inputs = {skeleton.text, text};
        const auto answers = model->classify(inputs);  // the second is truncated to the model's 128 tokens
        skeleton_agrees += static_cast<size_t>(answers[0].class_id) == whole;
        truncation_agrees += static_cast<size_t>(answers[1].class_id) == whole;
        whole_right += model->labels()[whole] == subject.label;
        skeleton_right += answers[0].label == subject.label;
        truncation_right += answers[1].label == subject.label;
        ++n;
      }
    }
    std::printf("| %zu | %zu | %.0f %% | %.0f %% | %.0f %% | %.0f %% | %.0f %% |\n", words, n,
                100.0 * skeleton_agrees / n, 100.0 * truncation_agrees / n, 100.0 * skeleton_right / n,
                100.0 * truncation_right / n, 100.0 * whole_right / n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  size_t budget = 126;  // the domain model's 128 tokens, less its two special tokens
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--budget") budget = std::stoul(argv[i + 1]);
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--speed-only") skip_decisions = true;
  std::printf("%s; one thread\n", semroute::cpu_features().describe().c_str());
  const auto tokenizer = semroute::load_tokenizer(kRepo / "models/domain");
  throughput(tokenizer);
  decision_agreement(budget);
  return 0;
}
