-- Files with the most rejected lines, by reason (the part of the reason before ':').
SELECT source_file, split_part(reason, ':', 1) AS reason, count(*) AS lines
FROM rejects
GROUP BY ALL
ORDER BY lines DESC, source_file, reason
LIMIT 50
