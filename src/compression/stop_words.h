// The stop-word lists shipped with the library (stop_words/*.txt, compiled
// in), the word identity the compressor counts with, and a guess of which
// list fits a text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace semroute {

// A word of a text: a run of letters and digits (inner apostrophes
// included: "don't"), or one CJK character (those scripts do not space
// words). `hash` is its identity: its code points in lowercase (simple case
// mapping), enough to match words against lowercase lists.
struct Word {
  uint32_t begin = 0, end = 0;  // bytes of the text scanned, plus its base
  uint64_t hash = 0;
};

// Appends the words of `text` (valid UTF-8) to `out`, offsets shifted by `base`.
void scan_words(std::string_view text, size_t base, std::vector<Word>& out);

struct StopWordList {
  std::string language;  // ISO 639-1 code: en, de, fr …
  std::unordered_set<uint64_t> words;
};

// Every shipped list, ordered by language code. Built once; immutable.
const std::vector<StopWordList>& stop_word_lists();

// The list called `language`; InvalidInput naming the languages there are.
const StopWordList& stop_word_list(const std::string& language);

// The list among `candidates` whose words make up the largest share of
// `word_hashes` (at least 5 %, and 3 words), or nullptr when none does.
const StopWordList* guess_language(const std::vector<uint64_t>& word_hashes,
                                   const std::vector<const StopWordList*>& candidates);

}  // namespace semroute
