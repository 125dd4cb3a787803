/**
 * The farm's fixed word list for `words` parameters (FAMILIES.md): 256 short, common, lower-case English words
 * (ASCII letters only: safe in goals, shells, file names and SQL alike). Its order is part of every family's draws:
 * append nothing, change nothing (a changed list would give episode i other words than before).
 */
export const WORDS: readonly string[] = Object.freeze([
  "apple", "river", "garden", "window", "pencil", "summer", "yellow", "orange", "silver", "planet",
  "forest", "candle", "rabbit", "bridge", "castle", "dinner", "market", "pepper", "rocket", "shadow",
  "butter", "cookie", "winter", "spring", "autumn", "island", "harbor", "meadow", "valley", "canyon",
  "breeze", "thunder", "blanket", "pillow", "mirror", "basket", "bottle", "button", "carpet", "ladder",
  "hammer", "wallet", "ticket", "letter", "parcel", "travel", "museum", "concert", "theater", "library",
  "doctor", "farmer", "artist", "singer", "pilot", "sailor", "teacher", "student", "friend", "family",
  "morning", "evening", "weekend", "holiday", "birthday", "meeting", "lesson", "project", "report", "budget",
  "coffee", "sugar", "bread", "cheese", "tomato", "potato", "carrot", "banana", "cherry", "lemon",
  "grape", "melon", "peach", "plum", "mango", "honey", "salad", "pasta", "soup", "pizza",
  "chair", "table", "sofa", "lamp", "clock", "phone", "camera", "laptop", "tablet", "printer",
  "paper", "folder", "notebook", "marker", "eraser", "stapler", "scissors", "ruler", "glue", "tape",
  "green", "blue", "purple", "brown", "white", "black", "golden", "pink", "gray", "violet",
  "quick", "quiet", "happy", "bright", "gentle", "simple", "clever", "brave", "calm", "eager",
  "lucky", "proud", "witty", "kind", "bold", "fresh", "warm", "cool", "sunny", "cloudy",
  "tiger", "horse", "zebra", "panda", "koala", "otter", "eagle", "falcon", "dolphin", "whale",
  "turtle", "parrot", "pigeon", "salmon", "lizard", "beaver", "badger", "camel", "donkey", "kitten",
  "puppy", "mouse", "spider", "beetle", "butterfly", "bee", "ant", "owl", "fox", "wolf",
  "ocean", "desert", "glacier", "volcano", "prairie", "jungle", "lagoon", "cliff", "beach", "hill",
  "stone", "pebble", "sand", "cloud", "rain", "snow", "storm", "rainbow", "sunset", "sunrise",
  "piano", "guitar", "violin", "drum", "flute", "trumpet", "cello", "harp", "banjo", "organ",
  "soccer", "tennis", "hockey", "chess", "cricket", "rugby", "golf", "boxing", "cycling", "rowing",
  "train", "plane", "truck", "bicycle", "scooter", "ferry", "subway", "tram", "taxi", "wagon",
  "city", "village", "street", "avenue", "square", "station", "airport", "school", "office", "hotel",
  "kitchen", "bedroom", "garage", "attic", "cellar", "balcony", "hallway", "porch", "yard", "fence",
  "paint", "brush", "canvas", "poem", "story", "novel", "diary", "recipe", "puzzle", "riddle",
  "silk", "wool", "cotton", "linen", "marble", "velvet",
]);
